// What Swift cannot take from sqlite3.h directly: the SQLITE_TRANSIENT and
// SQLITE_STATIC destructor macros (casts of integers to function pointers).
#ifndef MONSOON_CSQLITE_SHIM_H
#define MONSOON_CSQLITE_SHIM_H

#include <sqlite3.h>

#if SQLITE_VERSION_NUMBER < 3035000
#error "Monsoon needs SQLite 3.35 or newer (RETURNING, DROP COLUMN)."
#endif

/// Binds text that SQLite copies at once, so the Swift string may go away.
static inline int monsoon_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// Binds a blob that SQLite copies at once.
static inline int monsoon_sqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
