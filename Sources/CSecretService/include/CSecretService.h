#ifndef VAULTKIT_CSECRETSERVICE_H
#define VAULTKIT_CSECRETSERVICE_H

// The C libraries `vault secret-service` needs and no other command does: sd-bus (from
// libsystemd) for D-Bus, and libcrypto (OpenSSL) for the Secret Service's
// dh-ietf1024-sha256-aes128-cbc-pkcs7 session. Both are loaded with dlopen on first use
// (bus_loader.c, session_crypto.c), so `vault get` never maps them, and building needs
// neither library's headers: the few sd-bus prototypes used are declared here, with
// sd-bus's own names and types, behind a `vkbus_` prefix.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;

/// sd-bus's error (its layout is part of sd-bus's stable ABI).
typedef struct {
    const char *name;
    const char *message;
    int _need_free;
} vkbus_error;

typedef int (*vkbus_message_handler)(sd_bus_message *m, void *userdata, vkbus_error *ret_error);

/// 0 when libsystemd could be loaded, else -1 (every other function then fails with -ENOSYS).
int vkbus_load(void);

int vkbus_open_user(sd_bus **ret);
sd_bus *vkbus_flush_close_unref(sd_bus *bus);
int vkbus_request_name(sd_bus *bus, const char *name, uint64_t flags);
int vkbus_add_fallback(sd_bus *bus, const char *prefix, vkbus_message_handler callback, void *userdata);
int vkbus_add_match(sd_bus *bus, const char *match, vkbus_message_handler callback, void *userdata);
int vkbus_process(sd_bus *bus);
int vkbus_wait(sd_bus *bus, uint64_t timeout_usec);
int vkbus_release_name(sd_bus *bus, const char *name);
int vkbus_get_fd(sd_bus *bus);
int vkbus_get_events(sd_bus *bus);
int vkbus_get_timeout(sd_bus *bus, uint64_t *timeout_usec);
int vkbus_send(sd_bus *bus, sd_bus_message *m);
int vkbus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_message **reply);

int vkbus_message_new_method_return(sd_bus_message *call, sd_bus_message **m);
int vkbus_message_new_method_error(sd_bus_message *call, sd_bus_message **m, const char *name, const char *message);
int vkbus_message_new_signal(sd_bus *bus, sd_bus_message **m, const char *path, const char *interface, const char *member);
int vkbus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member);
int vkbus_message_set_destination(sd_bus_message *m, const char *destination);
sd_bus_message *vkbus_message_unref(sd_bus_message *m);
/// Marks a message whose buffers sd-bus clears when it frees them (a reply with a secret).
int vkbus_message_sensitive(sd_bus_message *m);

/// 1 for a method call, 4 for a signal (sd-bus's SD_BUS_MESSAGE_*).
int vkbus_message_type(sd_bus_message *m);
const char *vkbus_message_get_path(sd_bus_message *m);
const char *vkbus_message_get_interface(sd_bus_message *m);
const char *vkbus_message_get_member(sd_bus_message *m);
const char *vkbus_message_get_sender(sd_bus_message *m);
const char *vkbus_message_get_signature(sd_bus_message *m);

int vkbus_message_append_string(sd_bus_message *m, char type, const char *value);
int vkbus_message_append_bool(sd_bus_message *m, int value);
int vkbus_message_append_uint64(sd_bus_message *m, uint64_t value);
int vkbus_message_append_bytes(sd_bus_message *m, const void *bytes, size_t size);
int vkbus_message_open_container(sd_bus_message *m, char type, const char *contents);
int vkbus_message_close_container(sd_bus_message *m);

int vkbus_message_read_string(sd_bus_message *m, char type, const char **value);
int vkbus_message_read_bool(sd_bus_message *m, int *value);
int vkbus_message_read_uint32(sd_bus_message *m, uint32_t *value);
int vkbus_message_read_bytes(sd_bus_message *m, const void **bytes, size_t *size);
int vkbus_message_enter_container(sd_bus_message *m, char type, const char *contents);
int vkbus_message_exit_container(sd_bus_message *m);
int vkbus_message_peek_type(sd_bus_message *m, char *type, const char **contents);
int vkbus_message_skip(sd_bus_message *m, const char *types);

// The provider's loop (serve_loop.c).

/// Installs handlers that turn SIGTERM and SIGINT into a byte on a pipe; returns the
/// pipe's read end, or a negative errno.
int vkss_catch_stop_signals(void);
/// The signal number read from that pipe, or 0.
int vkss_stop_signal_received(int fd);
#define VKSS_READY_STOP 1
#define VKSS_READY_EXTRA 2
/// Waits at most `timeout_usec` (UINT64_MAX: no limit) for the bus, a stop signal or
/// `extra_fd` (-1: none). Returns which of VKSS_READY_STOP, VKSS_READY_EXTRA are ready
/// (0: the bus, or the time is up), or a negative errno.
int vkss_wait(sd_bus *bus, int stop_fd, int extra_fd, uint64_t timeout_usec);

/// Clears a secret's bytes where a received message holds them (received_wipe.c).
void vkss_wipe_received(const void *bytes, size_t size);

// The dh-ietf1024-sha256-aes128-cbc-pkcs7 algorithm (session_crypto.c), with libcrypto.

/// 0 when libcrypto could be loaded, else -1.
int vkss_crypto_load(void);
/// public = 2^private mod p (RFC 2409 group 2), both 128 bytes, big-endian. 0 or -1.
int vkss_dh_public_key(const uint8_t private_key[128], uint8_t public_key[128]);
/// The AES-128 key: HKDF-SHA256 (empty salt and info) of the shared secret peer^private
/// mod p, left-padded to 128 bytes. -1 for a peer key outside 1 < y < p-1.
int vkss_dh_aes_key(const uint8_t private_key[128], const uint8_t *peer_public, size_t peer_length, uint8_t aes_key[16]);
/// AES-128-CBC with PKCS#7 padding. `output` has room for `length + 16` bytes; returns
/// the number of bytes written, or -1.
long vkss_aes_encrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *input, size_t length, uint8_t *output);
/// The inverse; -1 for a wrong length or padding. `output` has room for `length + 16` bytes.
long vkss_aes_decrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *input, size_t length, uint8_t *output);

#endif
