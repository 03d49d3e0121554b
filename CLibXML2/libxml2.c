#include "monsoon_libxml2.h"
#include <dlfcn.h>

const char *monsoon_libxml2_open(struct monsoon_libxml2 *functions) {
    // Lazily bound, as the dynamic linker binds a program's own libraries: binding every
    // function of the library and all it loads up front costs more than the run of a small file.
    void *library = dlopen("libxml2.so.2", RTLD_LAZY | RTLD_LOCAL);
    if (!library) return dlerror();
#define MONSOON_LIBXML2_FIND(name) \
    if (!(*(void **)&functions->name = dlsym(library, #name))) return dlerror();
    MONSOON_LIBXML2_FIND(xmlInitParser)
    MONSOON_LIBXML2_FIND(xmlGetPredefinedEntity)
    MONSOON_LIBXML2_FIND(xmlCreatePushParserCtxt)
    MONSOON_LIBXML2_FIND(xmlFreeDoc)
    MONSOON_LIBXML2_FIND(xmlFreeParserCtxt)
    MONSOON_LIBXML2_FIND(xmlCtxtUseOptions)
    MONSOON_LIBXML2_FIND(xmlParseChunk)
    MONSOON_LIBXML2_FIND(xmlStopParser)
#undef MONSOON_LIBXML2_FIND
    functions->xmlInitParser();
    return NULL;
}
