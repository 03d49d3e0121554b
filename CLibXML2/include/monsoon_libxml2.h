// libxml2's push parser and SAX2 interface, for MonsoonPodcasts' feed parser. Its headers come
// through include/libxml, a link to Debian's (libxml2-dev), not pkg-config: pkg-config would
// link libxml2 into every program, which then loads it at every start.
#ifndef MONSOON_LIBXML2_H
#define MONSOON_LIBXML2_H
#include <libxml/xmlversion.h>
// Only xmlCharEncodingHandler's layout depends on ICU, and Swift code here never touches that
// struct, only pointers to what contains it: ICU's headers stay out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

/// The libxml2 functions Monsoon calls, found when a document is first parsed, not linked:
/// libxml2 brings ICU and libstdc++, whose loading and relocation took 1.7 ms of every start,
/// `monsoon get` and `--version` included, which never parse XML.
struct monsoon_libxml2 {
    void (* _Nonnull xmlInitParser)(void);
    xmlEntityPtr _Nullable (* _Nonnull xmlGetPredefinedEntity)(const xmlChar * _Nullable name);
    xmlParserCtxtPtr _Nullable (* _Nonnull xmlCreatePushParserCtxt)(xmlSAXHandlerPtr _Nullable sax, void * _Nullable user,
                                                                    const char * _Nullable chunk, int size, const char * _Nullable filename);
    void (* _Nonnull xmlFreeDoc)(xmlDocPtr _Nullable document);
    void (* _Nonnull xmlFreeParserCtxt)(xmlParserCtxtPtr _Nullable context);
    int (* _Nonnull xmlCtxtUseOptions)(xmlParserCtxtPtr _Nullable context, int options);
    int (* _Nonnull xmlParseChunk)(xmlParserCtxtPtr _Nullable context, const char * _Nullable chunk, int size, int terminate);
    void (* _Nonnull xmlStopParser)(xmlParserCtxtPtr _Nullable context);
};

/// Opens Debian's libxml2 (`libxml2.so.2`) and fills `functions`, then initialises the parser;
/// NULL when done, else the loader's reason.
const char * _Nullable monsoon_libxml2_open(struct monsoon_libxml2 * _Nonnull functions);

#endif
