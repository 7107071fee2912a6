// The dh-ietf1024-sha256-aes128-cbc-pkcs7 session algorithm of the Secret Service, with
// libcrypto (OpenSSL), loaded on first use as bus_loader.c loads sd-bus. libsodium, which
// the rest of VaultKit uses, has neither modular exponentiation nor AES-CBC.
//
// The derivation is gnome-keyring's and libsecret's (and SecretStorage's): the shared
// secret peer^private mod p as 128 big-endian bytes, HKDF-SHA256 with an empty salt (so a
// 32-byte zero HMAC key) and empty info, the first 16 bytes of output as the AES key.

#include "include/CSecretService.h"
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

typedef struct bignum_st BIGNUM;
typedef struct bignum_ctx BN_CTX;
typedef struct evp_cipher_st EVP_CIPHER;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_md_st EVP_MD;

static void *libcrypto;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static struct {
    BN_CTX *(*BN_CTX_new)(void);
    void (*BN_CTX_free)(BN_CTX *);
    BIGNUM *(*BN_bin2bn)(const unsigned char *, int, BIGNUM *);
    int (*BN_bn2binpad)(const BIGNUM *, unsigned char *, int);
    void (*BN_clear_free)(BIGNUM *);
    int (*BN_cmp)(const BIGNUM *, const BIGNUM *);
    int (*BN_mod_exp_mont_consttime)(BIGNUM *, const BIGNUM *, const BIGNUM *, const BIGNUM *, BN_CTX *, void *);
    BIGNUM *(*BN_new)(void);
    const EVP_CIPHER *(*EVP_aes_128_cbc)(void);
    EVP_CIPHER_CTX *(*EVP_CIPHER_CTX_new)(void);
    void (*EVP_CIPHER_CTX_free)(EVP_CIPHER_CTX *);
    int (*EVP_EncryptInit_ex)(EVP_CIPHER_CTX *, const EVP_CIPHER *, void *, const unsigned char *, const unsigned char *);
    int (*EVP_EncryptUpdate)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
    int (*EVP_EncryptFinal_ex)(EVP_CIPHER_CTX *, unsigned char *, int *);
    int (*EVP_DecryptInit_ex)(EVP_CIPHER_CTX *, const EVP_CIPHER *, void *, const unsigned char *, const unsigned char *);
    int (*EVP_DecryptUpdate)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
    int (*EVP_DecryptFinal_ex)(EVP_CIPHER_CTX *, unsigned char *, int *);
    const EVP_MD *(*EVP_sha256)(void);
    unsigned char *(*HMAC)(const EVP_MD *, const void *, int, const unsigned char *, size_t, unsigned char *, unsigned int *);
    void (*OPENSSL_cleanse)(void *, size_t);
} f;

#define LOOK_UP(name) if ((*(void **)&f.name = dlsym(libcrypto, #name)) == NULL) ok = 0;

static void load(void) {
    static const char *const names[] = {"libcrypto.so.3", "libcrypto.so", NULL};
    for (int i = 0; names[i] != NULL && libcrypto == NULL; i++) libcrypto = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (libcrypto == NULL) return;
    int ok = 1;
    LOOK_UP(BN_CTX_new) LOOK_UP(BN_CTX_free) LOOK_UP(BN_bin2bn) LOOK_UP(BN_bn2binpad) LOOK_UP(BN_clear_free)
    LOOK_UP(BN_cmp) LOOK_UP(BN_mod_exp_mont_consttime) LOOK_UP(BN_new) LOOK_UP(EVP_aes_128_cbc)
    LOOK_UP(EVP_CIPHER_CTX_new) LOOK_UP(EVP_CIPHER_CTX_free) LOOK_UP(EVP_EncryptInit_ex) LOOK_UP(EVP_EncryptUpdate)
    LOOK_UP(EVP_EncryptFinal_ex) LOOK_UP(EVP_DecryptInit_ex) LOOK_UP(EVP_DecryptUpdate) LOOK_UP(EVP_DecryptFinal_ex)
    LOOK_UP(EVP_sha256) LOOK_UP(HMAC) LOOK_UP(OPENSSL_cleanse)
    if (!ok) libcrypto = NULL;
}

int vkss_crypto_load(void) {
    pthread_once(&loaded, load);
    return libcrypto == NULL ? -1 : 0;
}

// RFC 2409, section 6.2: the second Oakley group, generator 2.
static const uint8_t prime[128] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
    0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
    0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
    0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
    0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
    0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
    0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
    0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

/// result = base^exponent mod p as 128 bytes; -1 when base is not in 1 < base < p-1.
static int power(const uint8_t *base, size_t base_length, const uint8_t exponent[128], uint8_t result[128]) {
    if (vkss_crypto_load() != 0 || base_length > 128) return -1;
    uint8_t p_minus_one[128];
    memcpy(p_minus_one, prime, 128);
    p_minus_one[127] -= 1;
    const uint8_t one = 1;
    BN_CTX *ctx = f.BN_CTX_new();
    BIGNUM *b = f.BN_bin2bn(base, (int)base_length, NULL), *e = f.BN_bin2bn(exponent, 128, NULL);
    BIGNUM *p = f.BN_bin2bn(prime, 128, NULL), *upper = f.BN_bin2bn(p_minus_one, 128, NULL);
    BIGNUM *lower = f.BN_bin2bn(&one, 1, NULL), *r = f.BN_new();
    int status = -1;
    if (ctx && b && e && p && upper && lower && r && f.BN_cmp(b, lower) > 0 && f.BN_cmp(b, upper) < 0
        && f.BN_mod_exp_mont_consttime(r, b, e, p, ctx, NULL) == 1 && f.BN_bn2binpad(r, result, 128) == 128)
        status = 0;
    f.BN_clear_free(b); f.BN_clear_free(e); f.BN_clear_free(p); f.BN_clear_free(upper); f.BN_clear_free(lower); f.BN_clear_free(r);
    if (ctx) f.BN_CTX_free(ctx);
    return status;
}

int vkss_dh_public_key(const uint8_t private_key[128], uint8_t public_key[128]) {
    const uint8_t generator = 2;
    return power(&generator, 1, private_key, public_key);
}

int vkss_dh_aes_key(const uint8_t private_key[128], const uint8_t *peer_public, size_t peer_length, uint8_t aes_key[16]) {
    uint8_t shared[128], salt[32] = {0}, prk[32], okm[32];
    const uint8_t counter = 1;
    unsigned int length = 0;
    int status = -1;
    if (power(peer_public, peer_length, private_key, shared) == 0
        && f.HMAC(f.EVP_sha256(), salt, sizeof salt, shared, sizeof shared, prk, &length) != NULL && length == 32
        && f.HMAC(f.EVP_sha256(), prk, sizeof prk, &counter, 1, okm, &length) != NULL && length == 32) {
        memcpy(aes_key, okm, 16);
        status = 0;
    }
    if (libcrypto != NULL) { f.OPENSSL_cleanse(shared, sizeof shared); f.OPENSSL_cleanse(prk, sizeof prk); f.OPENSSL_cleanse(okm, sizeof okm); }
    return status;
}

static long aes_cbc(int encrypt, const uint8_t key[16], const uint8_t iv[16], const uint8_t *input, size_t length, uint8_t *output) {
    if (vkss_crypto_load() != 0 || length > (1u << 30)) return -1;
    if (!encrypt && (length == 0 || length % 16 != 0)) return -1;
    EVP_CIPHER_CTX *ctx = f.EVP_CIPHER_CTX_new();
    if (ctx == NULL) return -1;
    int written = 0, last = 0, ok;
    if (encrypt)
        ok = f.EVP_EncryptInit_ex(ctx, f.EVP_aes_128_cbc(), NULL, key, iv) == 1
            && f.EVP_EncryptUpdate(ctx, output, &written, input, (int)length) == 1
            && f.EVP_EncryptFinal_ex(ctx, output + written, &last) == 1;
    else
        ok = f.EVP_DecryptInit_ex(ctx, f.EVP_aes_128_cbc(), NULL, key, iv) == 1
            && f.EVP_DecryptUpdate(ctx, output, &written, input, (int)length) == 1
            && f.EVP_DecryptFinal_ex(ctx, output + written, &last) == 1;
    f.EVP_CIPHER_CTX_free(ctx);
    if (!ok) { f.OPENSSL_cleanse(output, length + 16); return -1; }
    return (long)written + last;
}

long vkss_aes_encrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *input, size_t length, uint8_t *output) {
    return aes_cbc(1, key, iv, input, length, output);
}

long vkss_aes_decrypt(const uint8_t key[16], const uint8_t iv[16], const uint8_t *input, size_t length, uint8_t *output) {
    return aes_cbc(0, key, iv, input, length, output);
}
