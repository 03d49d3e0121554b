#include "monsoon_pq.h"
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

struct monsoon_pq_functions monsoon_pq;

static pthread_once_t opened = PTHREAD_ONCE_INIT;
static const char *failure;

static void monsoon_pq_load(void) {
    // Lazily bound, as the dynamic linker binds a program's own libraries: binding every
    // function of the library and all it loads up front costs more than the run of a small file.
    void *library = dlopen("libpq.so.5", RTLD_LAZY | RTLD_LOCAL);
    if (!library) {
        failure = strdup(dlerror());   // dlerror's buffer is overwritten by the next failing dl call
        return;
    }
#define MONSOON_PQ_FIND(name) \
    if (!(*(void **)&monsoon_pq.name = dlsym(library, #name))) { failure = strdup(dlerror()); return; }
    MONSOON_PQ_FIND(PQclear)
    MONSOON_PQ_FIND(PQcmdTuples)
    MONSOON_PQ_FIND(PQconnectdbParams)
    MONSOON_PQ_FIND(PQconninfoFree)
    MONSOON_PQ_FIND(PQconninfoParse)
    MONSOON_PQ_FIND(PQconsumeInput)
    MONSOON_PQ_FIND(PQdb)
    MONSOON_PQ_FIND(PQerrorMessage)
    MONSOON_PQ_FIND(PQexec)
    MONSOON_PQ_FIND(PQexecParams)
    MONSOON_PQ_FIND(PQexecPrepared)
    MONSOON_PQ_FIND(PQfinish)
    MONSOON_PQ_FIND(PQfname)
    MONSOON_PQ_FIND(PQfreemem)
    MONSOON_PQ_FIND(PQgetCopyData)
    MONSOON_PQ_FIND(PQgetResult)
    MONSOON_PQ_FIND(PQgetisnull)
    MONSOON_PQ_FIND(PQgetvalue)
    MONSOON_PQ_FIND(PQhost)
    MONSOON_PQ_FIND(PQnfields)
    MONSOON_PQ_FIND(PQnotifies)
    MONSOON_PQ_FIND(PQntuples)
    MONSOON_PQ_FIND(PQparameterStatus)
    MONSOON_PQ_FIND(PQport)
    MONSOON_PQ_FIND(PQprepare)
    MONSOON_PQ_FIND(PQputCopyEnd)
    MONSOON_PQ_FIND(PQreset)
    MONSOON_PQ_FIND(PQresultErrorMessage)
    MONSOON_PQ_FIND(PQresultStatus)
    MONSOON_PQ_FIND(PQsocket)
    MONSOON_PQ_FIND(PQstatus)
    MONSOON_PQ_FIND(PQtransactionStatus)
    MONSOON_PQ_FIND(PQuser)
    MONSOON_PQ_FIND(PQresultErrorField)
    MONSOON_PQ_FIND(PQsetNoticeProcessor)
#undef MONSOON_PQ_FIND
}

const char *monsoon_pq_open(void) {
    pthread_once(&opened, monsoon_pq_load);
    return failure;
}
