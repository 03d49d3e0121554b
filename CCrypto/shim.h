// OpenSSL's libcrypto, for SHA-256 of downloaded files (manifests, verify). libcurl on
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

#endif
