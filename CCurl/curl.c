#include "monsoon_curl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

struct monsoon_curl_functions monsoon_curl;

static pthread_once_t opened = PTHREAD_ONCE_INIT;
static const char *failure;

static void monsoon_curl_load(void) {
    // Lazily bound, as the dynamic linker binds a program's own libraries: binding every
    // function of the library and all it loads up front costs more than the run of a small file.
    void *library = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL);
    if (!library) {
        failure = strdup(dlerror());   // dlerror's buffer is overwritten by the next failing dl call
        return;
    }
#define MONSOON_CURL_FIND(field, name) \
    if (!(*(void **)&monsoon_curl.field = dlsym(library, #name))) { failure = strdup(dlerror()); return; }
    MONSOON_CURL_FIND(global_init, curl_global_init)
    MONSOON_CURL_FIND(easy_init, curl_easy_init)
    MONSOON_CURL_FIND(easy_cleanup, curl_easy_cleanup)
    MONSOON_CURL_FIND(easy_reset, curl_easy_reset)
    MONSOON_CURL_FIND(easy_setopt, curl_easy_setopt)
    MONSOON_CURL_FIND(easy_getinfo, curl_easy_getinfo)
    MONSOON_CURL_FIND(easy_pause, curl_easy_pause)
    MONSOON_CURL_FIND(easy_strerror, curl_easy_strerror)
    MONSOON_CURL_FIND(multi_init, curl_multi_init)
    MONSOON_CURL_FIND(multi_cleanup, curl_multi_cleanup)
    MONSOON_CURL_FIND(multi_setopt, curl_multi_setopt)
    MONSOON_CURL_FIND(multi_add_handle, curl_multi_add_handle)
    MONSOON_CURL_FIND(multi_remove_handle, curl_multi_remove_handle)
    MONSOON_CURL_FIND(multi_perform, curl_multi_perform)
    MONSOON_CURL_FIND(multi_poll, curl_multi_poll)
    MONSOON_CURL_FIND(multi_wakeup, curl_multi_wakeup)
    MONSOON_CURL_FIND(multi_info_read, curl_multi_info_read)
    MONSOON_CURL_FIND(slist_append, curl_slist_append)
    MONSOON_CURL_FIND(slist_free_all, curl_slist_free_all)
    MONSOON_CURL_FIND(version_info, curl_version_info)
#undef MONSOON_CURL_FIND
    if (monsoon_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) failure = "its set-up failed, out of memory";
}

const char *monsoon_curl_open(void) {
    pthread_once(&opened, monsoon_curl_load);
    return failure;
}
