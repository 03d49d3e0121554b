// zlib, for WARC files: each record is its own gzip member (`--warc`). libcurl on Debian
// already links it, so it costs no new dependency at run time.
#ifndef MONSOON_CZLIB_SHIM_H
#define MONSOON_CZLIB_SHIM_H

#include <zlib.h>

/// Starts a gzip member (windowBits 31: a gzip header and trailer around raw deflate) at `level`.
static inline int monsoon_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
}

/// Reads one gzip member (windowBits 31: gzip only, no raw or zlib streams).
static inline int monsoon_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 31);
}

#endif
