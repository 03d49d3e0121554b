#ifndef MONSOON_CLIBC_SHIM_H
#define MONSOON_CLIBC_SHIM_H

// What Monsoon needs of glibc that Swift's Glibc module leaves out (declared
// there only under _GNU_SOURCE): typed here, as CCurl's header does for the engine, so no
// symbol is looked up at run time. Every one is in glibc 2.34 and later (Debian 12: 2.36).

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <unistd.h>

extern int pthread_setname_np(pthread_t thread, const char *name);
extern int pipe2(int pipefd[2], int flags);
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

/// A pipe whose two ends are close-on-exec from the start (no window for another thread's spawn).
static inline int monsoon_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}

/// In the child: every descriptor from `from` on closed.
static inline int monsoon_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// In the child: starts in `path`.
static inline int monsoon_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

/// glibc's POSIX_SPAWN_SETSID: the child leads a session of its own, without a controlling terminal.
/// (spawn.h defines it under _GNU_SOURCE only; its value in every glibc since 2.26 otherwise.)
static inline short monsoon_spawn_setsid_flag(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0x80;
#endif
}

/// Names the calling thread (at most 15 bytes), as `top -H`, gdb and crash reports show it.
static inline int monsoon_name_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/// `format`, with one conversion, printed with a floating-point argument (`String(cFormat:)`).
static inline int monsoon_format_double(char *buffer, size_t size, const char *format, double value) {
    return snprintf(buffer, size, format, value);
}

/// `format`, with one conversion, printed with an integer argument (`String(cFormat:)`).
static inline int monsoon_format_long(char *buffer, size_t size, const char *format, long value) {
    return snprintf(buffer, size, format, value);
}

/// One malloc arena for every thread (see Sources/monsoon/main.swift).
static inline void monsoon_single_malloc_arena(void) {
    mallopt(M_ARENA_MAX, 1);
}

#endif
