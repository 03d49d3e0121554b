// OpenSSL's libcrypto, for SHA-256 of downloaded files (manifests, verify) and SHA-1 of WARC records. libcurl on
// Debian already links it, so it costs no new dependency at run time.
#ifndef MONSOON_CCRYPTO_SHIM_H
#define MONSOON_CCRYPTO_SHIM_H

// The digests go through OpenSSL's own SHA-256 and SHA-1 functions (the same assembly, SHA-NI
// included), not EVP: EVP's first use builds OpenSSL 3's algorithm store, 3 million instructions,
// more than a whole small download costs otherwise. Those functions are marked deprecated in 3.0
// but are kept through 3.x.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

/// Initialises OpenSSL without the exit handler it registers by default. The first initialisation in
/// the process decides, so this runs before anything else starts OpenSSL: curl_global_init (libcurl 7.88
/// does not ask for this), libpq. Later calls cost an atomic load; a failure (out
/// of memory) shows at OpenSSL's next use.
///
/// That handler, OPENSSL_cleanup, frees OpenSSL's global state under threads that may still use it: a
/// thread that ends runs OpenSSL's per-thread clean-up in its thread-local destructors, after its work
/// is done (the transfer thread just after `DownloadManager.shutdown()` returned), and short commands
/// died in that race at exit (SIGSEGV in OPENSSL_sk_num, or SIGABRT on a double free). The memory
/// goes with the process anyway.
static inline void monsoon_crypto_init(void) {
    (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/// A running digest: opaque to Swift (an OpaquePointer), SHA-256 or SHA-1 inside.
typedef struct monsoon_digest monsoon_digest;

struct monsoon_digest_state {
    int is_sha1;
    union {
        SHA256_CTX sha256;
        SHA_CTX sha1;
    } context;
};

static inline monsoon_digest *monsoon_digest_new(int is_sha1) {
    struct monsoon_digest_state *state = malloc(sizeof *state);
    if (!state) return NULL;
    state->is_sha1 = is_sha1;
    if ((is_sha1 ? SHA1_Init(&state->context.sha1) : SHA256_Init(&state->context.sha256)) != 1) {
        free(state);
        return NULL;
    }
    return (monsoon_digest *)state;
}

/// A SHA-256 digest, or NULL when memory ran out.
static inline monsoon_digest *monsoon_sha256_new(void) {
    return monsoon_digest_new(0);
}

/// A SHA-1 digest, or NULL when memory ran out (WARC digests, which the standard and its readers
/// give as SHA-1).
static inline monsoon_digest *monsoon_sha1_new(void) {
    return monsoon_digest_new(1);
}

static inline void monsoon_digest_update(monsoon_digest *digest, const void *bytes, size_t count) {
    struct monsoon_digest_state *state = (struct monsoon_digest_state *)digest;
    if (state->is_sha1) {
        SHA1_Update(&state->context.sha1, bytes, count);
    } else {
        SHA256_Update(&state->context.sha256, bytes, count);
    }
}

/// Finishes the digest into `out` (room for 32 bytes) and returns its length: 32, or 20 for SHA-1.
static inline int monsoon_digest_final(monsoon_digest *digest, unsigned char *out) {
    struct monsoon_digest_state *state = (struct monsoon_digest_state *)digest;
    if (state->is_sha1) {
        SHA1_Final(out, &state->context.sha1);
        return SHA_DIGEST_LENGTH;
    }
    SHA256_Final(out, &state->context.sha256);
    return SHA256_DIGEST_LENGTH;
}

/// A copy that goes on from where `digest` is, or NULL when memory ran out.
static inline monsoon_digest *monsoon_digest_copy(const monsoon_digest *digest) {
    struct monsoon_digest_state *copy = malloc(sizeof *copy);
    if (copy) memcpy(copy, digest, sizeof *copy);
    return (monsoon_digest *)copy;
}

static inline void monsoon_digest_free(monsoon_digest *digest) {
    free(digest);
}

#endif
