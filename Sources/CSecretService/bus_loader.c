// sd-bus, loaded from libsystemd when `vault secret-service` first needs it (as
// CLibPQLoader loads libpq), so that no other command maps libsystemd. Each `vkbus_`
// function forwards to the sd-bus function of the same name after the `vkbus_` prefix.

#include "include/CSecretService.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

static void *libsystemd;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const names[] = {"libsystemd.so.0", "libsystemd.so", NULL};
    for (int i = 0; names[i] != NULL && libsystemd == NULL; i++) libsystemd = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
}

int vkbus_load(void) {
    pthread_once(&loaded, load);
    return libsystemd == NULL ? -1 : 0;
}

// Each forwarder caches its pointer, looked up once (a race looks up the same pointer twice).
// Those that Swift calls keep the `vkbus_` name; the others are private helpers of this file.
static void *symbol(const char *name) {
    pthread_once(&loaded, load);
    return libsystemd == NULL ? NULL : dlsym(libsystemd, name);
}

#define FORWARD_WITH(LINKAGE, ret, name, real, params, args, fallback)              \
    LINKAGE ret name params {                                                                \
        static ret(*cached) params;                                                  \
        ret(*function) params = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);         \
        if (function == NULL) {                                                      \
            function = (ret(*) params)symbol(#real);                                 \
            if (function == NULL) return fallback;                                   \
            __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                   \
        }                                                                            \
        return function args;                                                        \
    }

FORWARD_WITH(,int, vkbus_open_user, sd_bus_open_user, (sd_bus **ret), (ret), -ENOSYS)
FORWARD_WITH(,sd_bus *, vkbus_flush_close_unref, sd_bus_flush_close_unref, (sd_bus *bus), (bus), NULL)
FORWARD_WITH(,int, vkbus_request_name, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags), (bus, name, flags), -ENOSYS)
FORWARD_WITH(static,int, real_add_fallback, sd_bus_add_fallback, (sd_bus *bus, sd_bus_slot **slot, const char *prefix, vkbus_message_handler callback, void *userdata), (bus, slot, prefix, callback, userdata), -ENOSYS)
FORWARD_WITH(static,int, real_add_match, sd_bus_add_match, (sd_bus *bus, sd_bus_slot **slot, const char *match, vkbus_message_handler callback, void *userdata), (bus, slot, match, callback, userdata), -ENOSYS)
FORWARD_WITH(static,int, real_process, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r), -ENOSYS)
FORWARD_WITH(,int, vkbus_release_name, sd_bus_release_name, (sd_bus *bus, const char *name), (bus, name), -ENOSYS)
FORWARD_WITH(,int, vkbus_get_fd, sd_bus_get_fd, (sd_bus *bus), (bus), -ENOSYS)
FORWARD_WITH(,int, vkbus_get_events, sd_bus_get_events, (sd_bus *bus), (bus), -ENOSYS)
FORWARD_WITH(,int, vkbus_get_timeout, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec), -ENOSYS)
FORWARD_WITH(,int, vkbus_wait, sd_bus_wait, (sd_bus *bus, uint64_t timeout_usec), (bus, timeout_usec), -ENOSYS)
FORWARD_WITH(static,int, real_send, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie), -ENOSYS)
FORWARD_WITH(static,int, real_call, sd_bus_call, (sd_bus *bus, sd_bus_message *m, uint64_t usec, vkbus_error *error, sd_bus_message **reply), (bus, m, usec, error, reply), -ENOSYS)
FORWARD_WITH(static,int, real_error_free, sd_bus_error_free, (vkbus_error *error), (error), 0)

FORWARD_WITH(,int, vkbus_message_new_method_return, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m), -ENOSYS)
FORWARD_WITH(static,int, real_new_method_error, sd_bus_message_new_method_error, (sd_bus_message *call, sd_bus_message **m, const vkbus_error *e), (call, m, e), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_new_signal, sd_bus_message_new_signal, (sd_bus *bus, sd_bus_message **m, const char *path, const char *interface, const char *member), (bus, m, path, interface, member), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_new_method_call, sd_bus_message_new_method_call, (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member), (bus, m, destination, path, interface, member), -ENOSYS)
// sd-bus before 245 has no sensitive flag: such a message is then freed uncleared.
FORWARD_WITH(,int, vkbus_message_sensitive, sd_bus_message_sensitive, (sd_bus_message *m), (m), 0)
FORWARD_WITH(,int, vkbus_message_set_destination, sd_bus_message_set_destination, (sd_bus_message *m, const char *destination), (m, destination), -ENOSYS)
FORWARD_WITH(,sd_bus_message *, vkbus_message_unref, sd_bus_message_unref, (sd_bus_message *m), (m), NULL)
FORWARD_WITH(static,int, real_get_type, sd_bus_message_get_type, (sd_bus_message *m, uint8_t *type), (m, type), -ENOSYS)
FORWARD_WITH(,const char *, vkbus_message_get_path, sd_bus_message_get_path, (sd_bus_message *m), (m), NULL)
FORWARD_WITH(,const char *, vkbus_message_get_interface, sd_bus_message_get_interface, (sd_bus_message *m), (m), NULL)
FORWARD_WITH(,const char *, vkbus_message_get_member, sd_bus_message_get_member, (sd_bus_message *m), (m), NULL)
FORWARD_WITH(,const char *, vkbus_message_get_sender, sd_bus_message_get_sender, (sd_bus_message *m), (m), NULL)
FORWARD_WITH(static,const char *, real_get_signature, sd_bus_message_get_signature, (sd_bus_message *m, int complete), (m, complete), NULL)

FORWARD_WITH(static,int, real_append_basic, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p), -ENOSYS)
FORWARD_WITH(static,int, real_append_array, sd_bus_message_append_array, (sd_bus_message *m, char type, const void *ptr, size_t size), (m, type, ptr, size), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_open_container, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_close_container, sd_bus_message_close_container, (sd_bus_message *m), (m), -ENOSYS)
FORWARD_WITH(static,int, real_read_basic, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p), -ENOSYS)
FORWARD_WITH(static,int, real_read_array, sd_bus_message_read_array, (sd_bus_message *m, char type, const void **ptr, size_t *size), (m, type, ptr, size), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_enter_container, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_exit_container, sd_bus_message_exit_container, (sd_bus_message *m), (m), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_peek_type, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents), -ENOSYS)
FORWARD_WITH(,int, vkbus_message_skip, sd_bus_message_skip, (sd_bus_message *m, const char *types), (m, types), -ENOSYS)

// The bus owns these slots (a NULL slot is "floating"): they live as long as the connection.
int vkbus_add_fallback(sd_bus *bus, const char *prefix, vkbus_message_handler callback, void *userdata) {
    return real_add_fallback(bus, NULL, prefix, callback, userdata);
}
int vkbus_add_match(sd_bus *bus, const char *match, vkbus_message_handler callback, void *userdata) {
    return real_add_match(bus, NULL, match, callback, userdata);
}
int vkbus_process(sd_bus *bus) { return real_process(bus, NULL); }
int vkbus_send(sd_bus *bus, sd_bus_message *m) { return real_send(bus, m, NULL); }
int vkbus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_message **reply) {
    vkbus_error error = {NULL, NULL, 0};
    int r = real_call(bus, m, usec, &error, reply);
    real_error_free(&error);
    return r;
}
int vkbus_message_new_method_error(sd_bus_message *call, sd_bus_message **m, const char *name, const char *message) {
    vkbus_error error = {name, message, 0};
    return real_new_method_error(call, m, &error);
}
int vkbus_message_type(sd_bus_message *m) {
    uint8_t type = 0;
    return real_get_type(m, &type) < 0 ? -1 : type;
}
const char *vkbus_message_get_signature(sd_bus_message *m) { return real_get_signature(m, 1); }

int vkbus_message_append_string(sd_bus_message *m, char type, const char *value) { return real_append_basic(m, type, value); }
int vkbus_message_append_bool(sd_bus_message *m, int value) { return real_append_basic(m, 'b', &value); }
int vkbus_message_append_uint64(sd_bus_message *m, uint64_t value) { return real_append_basic(m, 't', &value); }
int vkbus_message_append_bytes(sd_bus_message *m, const void *bytes, size_t size) { return real_append_array(m, 'y', bytes, size); }
int vkbus_message_read_string(sd_bus_message *m, char type, const char **value) { return real_read_basic(m, type, value); }
int vkbus_message_read_bool(sd_bus_message *m, int *value) { return real_read_basic(m, 'b', value); }
int vkbus_message_read_uint32(sd_bus_message *m, uint32_t *value) { return real_read_basic(m, 'u', value); }
int vkbus_message_read_bytes(sd_bus_message *m, const void **bytes, size_t *size) { return real_read_array(m, 'y', bytes, size); }
