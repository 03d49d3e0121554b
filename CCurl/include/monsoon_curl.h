// libcurl, opened when the engine first starts (dlopen), not linked: libcurl and what it
// brings (OpenSSL's TLS, Kerberos, LDAP, nghttp2, libssh2 …) took 6 ms of every start, `inspect`
// and `--version` included, which never transfer. The functions are found once with dlsym
// (monsoon_curl_open) into `monsoon_curl`; every call below goes through it.
//
// Typed wrappers over libcurl's variadic calls, which Swift cannot call.
//
// curl reads its variadic argument as exactly one C type per option: `long`,
// `curl_off_t`, a data pointer, a string or a function pointer. Each wrapper
// below passes exactly that type, so a Swift `Int32` can never reach curl where
// it reads a `long` (the bug that breaks 64-bit options silently).
#ifndef MONSOON_CCURL_SHIM_H
#define MONSOON_CCURL_SHIM_H

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#if LIBCURL_VERSION_NUM < 0x075500
#error "Monsoon needs libcurl 7.85 or newer (CURLOPT_PROTOCOLS_STR)."
#endif

/// libcurl's functions, filled by monsoon_curl_open (curl.c).
struct monsoon_curl_functions {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLcode (*easy_pause)(CURL *handle, int bitmask);
    const char *(*easy_strerror)(CURLcode code);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *handle);
    CURLMcode (*multi_setopt)(CURLM *handle, CURLMoption option, ...);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *easy);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *easy);
    CURLMcode (*multi_perform)(CURLM *multi, int *running);
    CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready);
    CURLMcode (*multi_wakeup)(CURLM *multi);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *queued);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
    curl_version_info_data *(*version_info)(CURLversion version);
};

extern struct monsoon_curl_functions monsoon_curl;

/// Opens Debian's libcurl (`libcurl.so.4`) into `monsoon_curl` and runs curl_global_init, once
/// for the process (later calls give the first call's answer): NULL when done, else the reason.
/// Nothing below may be called before it succeeded.
const char *monsoon_curl_open(void);

// MARK: - Calls (through the table)

static inline CURL *monsoon_curl_easy_init(void) { return monsoon_curl.easy_init(); }
static inline void monsoon_curl_easy_cleanup(CURL *handle) { monsoon_curl.easy_cleanup(handle); }
static inline void monsoon_curl_easy_reset(CURL *handle) { monsoon_curl.easy_reset(handle); }
static inline const char *monsoon_curl_easy_strerror(CURLcode code) { return monsoon_curl.easy_strerror(code); }
static inline CURLM *monsoon_curl_multi_init(void) { return monsoon_curl.multi_init(); }
static inline CURLMcode monsoon_curl_multi_cleanup(CURLM *handle) { return monsoon_curl.multi_cleanup(handle); }
static inline CURLMcode monsoon_curl_multi_add_handle(CURLM *multi, CURL *easy) { return monsoon_curl.multi_add_handle(multi, easy); }
static inline CURLMcode monsoon_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return monsoon_curl.multi_remove_handle(multi, easy); }
static inline CURLMcode monsoon_curl_multi_perform(CURLM *multi, int *running) { return monsoon_curl.multi_perform(multi, running); }
static inline CURLMcode monsoon_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout, int *ready) {
    return monsoon_curl.multi_poll(multi, extra, count, timeout, ready);
}
static inline CURLMcode monsoon_curl_multi_wakeup(CURLM *multi) { return monsoon_curl.multi_wakeup(multi); }
static inline struct curl_slist *monsoon_curl_slist_append(struct curl_slist *list, const char *text) { return monsoon_curl.slist_append(list, text); }
static inline void monsoon_curl_slist_free_all(struct curl_slist *list) { monsoon_curl.slist_free_all(list); }

// MARK: - Easy options

static inline CURLcode monsoon_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

static inline CURLcode monsoon_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

static inline CURLcode monsoon_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

static inline CURLcode monsoon_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

static inline CURLcode monsoon_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (same signature).
static inline CURLcode monsoon_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return monsoon_curl.easy_setopt(handle, option, value);
}

/// Marks every socket curl opens close-on-exec, so a child process (a player, a
/// converter) never inherits a transfer's connection and keeps it open. A `context`
/// (CURLOPT_SOCKOPTDATA, see `monsoon_easy_set_receive_buffer`) other than NULL is a
/// receive buffer size in bytes, set before the socket connects.
static int monsoon_socket_cloexec(void *context, curl_socket_t socket, curlsocktype purpose) {
    (void)purpose;
    int flags = fcntl(socket, F_GETFD);
    if (flags >= 0) fcntl(socket, F_SETFD, flags | FD_CLOEXEC);
    int size = (int)(intptr_t)context;
    // Only a bound on what the kernel buffers: a failure leaves its own size, which works too.
    if (size > 0) setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return CURL_SOCKOPT_OK;
}

static inline CURLcode monsoon_easy_set_sockets_cloexec(CURL *handle) {
    return monsoon_curl.easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, monsoon_socket_cloexec);
}

/// The receive buffer (SO_RCVBUF) of the connections this handle opens from now on; 0 leaves
/// the kernel's own, which it grows as it sees fit.
static inline CURLcode monsoon_easy_set_receive_buffer(CURL *handle, int bytes) {
    return monsoon_curl.easy_setopt(handle, CURLOPT_SOCKOPTDATA, (void *)(intptr_t)bytes);
}

/// For CURLOPT_DEBUGFUNCTION (with CURLOPT_VERBOSE): set only when a WARC is written, to see
/// each request's header block as curl sent it (CURLINFO_HEADER_OUT).
static inline CURLcode monsoon_easy_setopt_debug_function(CURL *handle, curl_debug_callback value) {
    return monsoon_curl.easy_setopt(handle, CURLOPT_DEBUGFUNCTION, value);
}

/// CURLOPT_PREREQFUNCTION (libcurl 7.80): called once a connection is made or reused, before
/// each request goes out on it, with the address it reaches.
static inline CURLcode monsoon_easy_setopt_prereq_function(CURL *handle, curl_prereq_callback value) {
    return monsoon_curl.easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}

static inline CURLcode monsoon_easy_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) {
    return monsoon_curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

// MARK: - Easy info

static inline CURLcode monsoon_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return monsoon_curl.easy_getinfo(handle, info, value);
}

static inline CURLcode monsoon_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return monsoon_curl.easy_getinfo(handle, info, value);
}

static inline CURLcode monsoon_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return monsoon_curl.easy_getinfo(handle, info, value);
}

// MARK: - Multi options

static inline CURLMcode monsoon_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return monsoon_curl.multi_setopt(handle, option, value);
}

// MARK: - Multi messages

/// Copies out what Swift needs of a CURLMsg: the message is only valid until
/// the next multi call, and its `data` member is a C union.
static inline int monsoon_multi_info_read_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = monsoon_curl.multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// MARK: - Pausing (the macros do not import)

/// What a write callback returns to hold the data it was given until `monsoon_easy_unpause`.
static inline size_t monsoon_write_pause(void) { return CURL_WRITEFUNC_PAUSE; }

/// Lets a paused transfer go on; curl may call the write callback before this returns.
static inline CURLcode monsoon_easy_unpause(CURL *handle) {
    return monsoon_curl.easy_pause(handle, CURLPAUSE_CONT);
}

// MARK: - Version

static inline const curl_version_info_data *monsoon_version_info(void) {
    return monsoon_curl.version_info(CURLVERSION_NOW);
}

// MARK: - Part-file support
//
// Not curl, but only the engine (the one importer of this module) needs them, and
// Swift's Glibc module does not export <sys/xattr.h> or the UTIME_OMIT macro.

static inline int monsoon_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

static inline long monsoon_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return (long)fgetxattr(fd, name, value, size);
}

static inline int monsoon_fremovexattr(int fd, const char *name) {
    return fremovexattr(fd, name);
}

/// A symbolic link's own attributes, never its target's: a link planted at a part's path
/// must not lend it another file's resume state.
static inline long monsoon_getxattr(const char *path, const char *name, void *value, size_t size) {
    return (long)lgetxattr(path, name, value, size);
}

/// Starts writing back a range of a file without waiting for it, so the fsync at
/// completion finds little left to do (the kernel's own writeback starts late).
// glibc declares sync_file_range only under _GNU_SOURCE, and defining that here would
// change system structs (fd_set) under other modules' feet; declare it ourselves.
extern int sync_file_range(int fd, long offset, long nbytes, unsigned int flags);

static inline int monsoon_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, (long)offset, (long)length, 2 /* SYNC_FILE_RANGE_WRITE */);
}

// Declared here for the same reason as sync_file_range (glibc 2.28 has it under _GNU_SOURCE).
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// Renames `from` to `to` unless `to` exists (EEXIST then). A file system without
/// RENAME_NOREPLACE (EINVAL) gets link and unlink, which refuse an existing name too.
static inline int monsoon_rename_noreplace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(from, to) != 0) return -1;
    return unlink(from);
}

/// An unnamed file in the folder `dirfd` (O_TMPFILE), for writing; it gets its name with
/// `monsoon_link_tmpfile` once whole and flushed, and a run killed before that leaves nothing.
/// -1 with EOPNOTSUPP (or EISDIR, EINVAL on older kernels) where the file system has none.
static inline int monsoon_open_tmpfile(int dirfd, mode_t mode) {
    return openat(dirfd, ".", O_WRONLY | O_CLOEXEC | __O_TMPFILE, mode);   // __O_TMPFILE: O_TMPFILE needs _GNU_SOURCE
}

/// Gives the unnamed file `fd` the name `name` in the folder `dirfd`; EEXIST when the name is
/// taken (never replaced). By descriptor (AT_EMPTY_PATH), which Linux 6.10 lets the file's opener
/// do and older kernels only with CAP_DAC_READ_SEARCH (ENOENT without), or through /proc, which
/// costs a walk of /proc's path.
static inline int monsoon_link_tmpfile(int fd, int dirfd, const char *name, int through_proc) {
    if (!through_proc) return linkat(fd, "", dirfd, name, 0x1000 /* AT_EMPTY_PATH: needs _GNU_SOURCE */);
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

static inline long monsoon_utime_omit(void) {
    return UTIME_OMIT;
}

#endif
