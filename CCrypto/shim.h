// OpenSSL's libcrypto, for SHA-256 of downloaded files (manifests, verify) and SHA-1 of WARC records. libcurl on
// Debian already links it, so it costs no new dependency at run time.
#ifndef MONSOON_CCRYPTO_SHIM_H
#define MONSOON_CCRYPTO_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>

/// Initialises OpenSSL without the exit handler it registers by default. The first initialisation in
/// the process decides, so this runs before anything else starts OpenSSL: curl_global_init (libcurl 7.88
/// does not ask for this), the first digest, libpq. Later calls cost an atomic load; a failure (out
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

/// A SHA-256 context, or NULL when OpenSSL cannot make one.
static inline EVP_MD_CTX *monsoon_sha256_new(void) {
    monsoon_crypto_init();
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context && EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

/// A SHA-1 context, or NULL when OpenSSL cannot make one (WARC digests, which the
/// standard and its readers give as SHA-1).
static inline EVP_MD_CTX *monsoon_sha1_new(void) {
    monsoon_crypto_init();
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context && EVP_DigestInit_ex(context, EVP_sha1(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

#endif
