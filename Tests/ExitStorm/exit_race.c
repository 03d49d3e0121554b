// Preloaded into every command of Tests/ExitStorm/exit_storm.sh: makes the exit race of issue 44
// (point 4) happen at every run instead of about once in 700 on a loaded machine. It only ever
// delays a thread, which correct code survives.
//
// The race: a thread that used OpenSSL runs OpenSSL's per-thread clean-up in its thread-local
// destructors, after its work is done (the transfer thread just after DownloadManager.shutdown()
// returned), while `exit` runs OpenSSL's exit handler, OPENSSL_cleanup, which frees the global
// register of those clean-ups under it (SIGSEGV in OPENSSL_sk_num, or SIGABRT on a double free).
//
// How: threads are started through a wrapper that marks the thread once its function has
// returned (only its destructors run then). Such a thread's second lock of OpenSSL's register,
// init_thread_remove_handlers' (OpenSSL 3), taken after it has read the register's address, is
// held until another thread frees an entry of that register (OPENSSL_cleanup has begun) or for
// 50 ms; that thread is then held 5 ms, so the process is still there when the first goes on.
// Against another OpenSSL the hold may land elsewhere or nowhere: still only a delay.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// 0 while the thread's function runs; then how many locks its destructors have taken, plus 1.
static __thread int ended;
static volatile int cleaning;

struct start {
    void *(*body)(void *);
    void *argument;
};

static void *run(void *context) {
    struct start start = *(struct start *)context;
    free(context);
    void *result = start.body(start.argument);
    ended = 1;
    return result;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*body)(void *), void *argument) {
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    struct start *start = malloc(sizeof *start);
    if (!start) return real(thread, attributes, body, argument);
    start->body = body;
    start->argument = argument;
    int result = real(thread, attributes, run, start);
    if (result != 0) free(start);
    return result;
}

int CRYPTO_THREAD_write_lock(void *lock) {
    static int (*real)(void *);
    if (!real) real = (int (*)(void *))dlsym(RTLD_NEXT, "CRYPTO_THREAD_write_lock");
    if (ended && ++ended == 3) {
        for (int wait = 0; wait < 500 && !cleaning; wait++) usleep(100);
    }
    return real(lock);
}

void CRYPTO_free(void *pointer, const char *file, int line) {
    static void (*real)(void *, const char *, int);
    if (!real) real = (void (*)(void *, const char *, int))dlsym(RTLD_NEXT, "CRYPTO_free");
    int freesRegister = pointer && !ended && !cleaning && file && strstr(file, "initthread.c");
    real(pointer, file, line);
    if (freesRegister) {
        cleaning = 1;
        usleep(5000);
    }
}
