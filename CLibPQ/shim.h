// What Swift cannot take from libpq-fe.h directly: the PG_DIAG_* field codes are character
// macros, which do not import as the `int` PQresultErrorField reads, and a notice processor is
// a C function pointer. Any libpq from PostgreSQL 10 on will do (several hosts in one
// connection string); Debian's libpq-dev puts this header in /usr/include/postgresql, which
// pkg-config's libpq adds to the include path.
#ifndef MONSOON_CLIBPQ_SHIM_H
#define MONSOON_CLIBPQ_SHIM_H

#include <libpq-fe.h>

/// The server's SQLSTATE for a failed result ("42601"), or NULL for an error of libpq's own.
static inline const char *monsoon_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

/// The server's one-line message for a failed result, without "ERROR:" or the statement's text.
static inline const char *monsoon_pq_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}

/// The constraint a failed result broke ("monsoon_jobs_key_key"), or NULL.
static inline const char *monsoon_pq_constraint(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME);
}

static void monsoon_pq_discard_notice(void *context, const char *message) {
    (void)context;
    (void)message;
}

/// Drops the server's notices and warnings ("relation already exists, skipping") instead of
/// letting libpq print them on standard error, where they would break a command's one-line
/// messages; every failure that matters comes back as an error result.
static inline void monsoon_pq_discard_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, monsoon_pq_discard_notice, NULL);
}

#endif
