// OpenSSL's libcrypto, for SHA-256 of downloaded files (manifests, verify) and SHA-1 of WARC records. libcurl on
// Debian already links it, so it costs no new dependency at run time.
#ifndef MONSOON_CCRYPTO_SHIM_H
#define MONSOON_CCRYPTO_SHIM_H

#include <openssl/evp.h>

/// A SHA-256 context, or NULL when OpenSSL cannot make one.
static inline EVP_MD_CTX *monsoon_sha256_new(void) {
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
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context && EVP_DigestInit_ex(context, EVP_sha1(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

#endif
