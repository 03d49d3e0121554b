// libxml2's push parser and SAX2 interface, for MonsoonPodcasts' feed parser.
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, whose headers clash with the copy Foundation carries
// (_FoundationICU). Only xmlCharEncodingHandler's layout depends on this, and Swift code here
// never touches that struct, only pointers to what contains it.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
