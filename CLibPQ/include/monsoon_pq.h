// What Swift cannot take from libpq-fe.h directly: the PG_DIAG_* field codes are character
// macros, which do not import as the `int` PQresultErrorField reads, and a notice processor is
// a C function pointer. Any libpq from PostgreSQL 10 on will do (several hosts in one
// connection string).
//
// libpq is opened when a cluster command first connects (dlopen), not linked: it and what it
// brings (Kerberos, LDAP, GnuTLS) took about 5 ms of every start. Its headers come through links
// in include/ to Debian's libpq-dev (/usr/include/postgresql), not pkg-config, which would link it.
#ifndef MONSOON_CLIBPQ_SHIM_H
#define MONSOON_CLIBPQ_SHIM_H

#include "libpq-fe.h"

/// libpq's functions, filled by monsoon_pq_open (pq.c).
struct monsoon_pq_functions {
    void (*PQclear)(PGresult *res);
    char * (*PQcmdTuples)(PGresult *res);
    PGconn * (*PQconnectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    void (*PQconninfoFree)(PQconninfoOption *connOptions);
    PQconninfoOption * (*PQconninfoParse)(const char *conninfo, char **errmsg);
    int (*PQconsumeInput)(PGconn *conn);
    char * (*PQdb)(const PGconn *conn);
    char * (*PQerrorMessage)(const PGconn *conn);
    PGresult * (*PQexec)(PGconn *conn, const char *query);
    PGresult * (*PQexecParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
    PGresult * (*PQexecPrepared)(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
    void (*PQfinish)(PGconn *conn);
    char * (*PQfname)(const PGresult *res, int field_num);
    void (*PQfreemem)(void *ptr);
    int (*PQgetCopyData)(PGconn *conn, char **buffer, int async);
    PGresult * (*PQgetResult)(PGconn *conn);
    int (*PQgetisnull)(const PGresult *res, int tup_num, int field_num);
    char * (*PQgetvalue)(const PGresult *res, int tup_num, int field_num);
    char * (*PQhost)(const PGconn *conn);
    int (*PQnfields)(const PGresult *res);
    PGnotify * (*PQnotifies)(PGconn *conn);
    int (*PQntuples)(const PGresult *res);
    const char * (*PQparameterStatus)(const PGconn *conn, const char *paramName);
    char * (*PQport)(const PGconn *conn);
    PGresult * (*PQprepare)(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes);
    int (*PQputCopyEnd)(PGconn *conn, const char *errormsg);
    void (*PQreset)(PGconn *conn);
    char * (*PQresultErrorMessage)(const PGresult *res);
    ExecStatusType (*PQresultStatus)(const PGresult *res);
    int (*PQsocket)(const PGconn *conn);
    ConnStatusType (*PQstatus)(const PGconn *conn);
    PGTransactionStatusType (*PQtransactionStatus)(const PGconn *conn);
    char * (*PQuser)(const PGconn *conn);
    char * (*PQresultErrorField)(const PGresult *res, int fieldcode);
    PQnoticeProcessor (*PQsetNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
};

extern struct monsoon_pq_functions monsoon_pq;

/// Opens Debian's libpq (`libpq.so.5`) into `monsoon_pq`, once for the process (later calls give
/// the first call's answer): NULL when done, else the reason. Nothing below may be called before.
const char *monsoon_pq_open(void);

// MARK: - Calls (through the table)

static inline void monsoon_PQclear(PGresult *res) { monsoon_pq.PQclear(res); }
static inline char *monsoon_PQcmdTuples(PGresult *res) { return monsoon_pq.PQcmdTuples(res); }
static inline PGconn *monsoon_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) { return monsoon_pq.PQconnectdbParams(keywords, values, expand_dbname); }
static inline void monsoon_PQconninfoFree(PQconninfoOption *connOptions) { monsoon_pq.PQconninfoFree(connOptions); }
static inline PQconninfoOption *monsoon_PQconninfoParse(const char *conninfo, char **errmsg) { return monsoon_pq.PQconninfoParse(conninfo, errmsg); }
static inline int monsoon_PQconsumeInput(PGconn *conn) { return monsoon_pq.PQconsumeInput(conn); }
static inline char *monsoon_PQdb(const PGconn *conn) { return monsoon_pq.PQdb(conn); }
static inline char *monsoon_PQerrorMessage(const PGconn *conn) { return monsoon_pq.PQerrorMessage(conn); }
static inline PGresult *monsoon_PQexec(PGconn *conn, const char *query) { return monsoon_pq.PQexec(conn, query); }
static inline PGresult *monsoon_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) { return monsoon_pq.PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat); }
static inline PGresult *monsoon_PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) { return monsoon_pq.PQexecPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat); }
static inline void monsoon_PQfinish(PGconn *conn) { monsoon_pq.PQfinish(conn); }
static inline char *monsoon_PQfname(const PGresult *res, int field_num) { return monsoon_pq.PQfname(res, field_num); }
static inline void monsoon_PQfreemem(void *ptr) { monsoon_pq.PQfreemem(ptr); }
static inline int monsoon_PQgetCopyData(PGconn *conn, char **buffer, int async) { return monsoon_pq.PQgetCopyData(conn, buffer, async); }
static inline PGresult *monsoon_PQgetResult(PGconn *conn) { return monsoon_pq.PQgetResult(conn); }
static inline int monsoon_PQgetisnull(const PGresult *res, int tup_num, int field_num) { return monsoon_pq.PQgetisnull(res, tup_num, field_num); }
static inline char *monsoon_PQgetvalue(const PGresult *res, int tup_num, int field_num) { return monsoon_pq.PQgetvalue(res, tup_num, field_num); }
static inline char *monsoon_PQhost(const PGconn *conn) { return monsoon_pq.PQhost(conn); }
static inline int monsoon_PQnfields(const PGresult *res) { return monsoon_pq.PQnfields(res); }
static inline PGnotify *monsoon_PQnotifies(PGconn *conn) { return monsoon_pq.PQnotifies(conn); }
static inline int monsoon_PQntuples(const PGresult *res) { return monsoon_pq.PQntuples(res); }
static inline const char *monsoon_PQparameterStatus(const PGconn *conn, const char *paramName) { return monsoon_pq.PQparameterStatus(conn, paramName); }
static inline char *monsoon_PQport(const PGconn *conn) { return monsoon_pq.PQport(conn); }
static inline PGresult *monsoon_PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) { return monsoon_pq.PQprepare(conn, stmtName, query, nParams, paramTypes); }
static inline int monsoon_PQputCopyEnd(PGconn *conn, const char *errormsg) { return monsoon_pq.PQputCopyEnd(conn, errormsg); }
static inline void monsoon_PQreset(PGconn *conn) { monsoon_pq.PQreset(conn); }
static inline char *monsoon_PQresultErrorMessage(const PGresult *res) { return monsoon_pq.PQresultErrorMessage(res); }
static inline ExecStatusType monsoon_PQresultStatus(const PGresult *res) { return monsoon_pq.PQresultStatus(res); }
static inline int monsoon_PQsocket(const PGconn *conn) { return monsoon_pq.PQsocket(conn); }
static inline ConnStatusType monsoon_PQstatus(const PGconn *conn) { return monsoon_pq.PQstatus(conn); }
static inline PGTransactionStatusType monsoon_PQtransactionStatus(const PGconn *conn) { return monsoon_pq.PQtransactionStatus(conn); }
static inline char *monsoon_PQuser(const PGconn *conn) { return monsoon_pq.PQuser(conn); }
static inline char *monsoon_PQresultErrorField(const PGresult *res, int fieldcode) { return monsoon_pq.PQresultErrorField(res, fieldcode); }
static inline PQnoticeProcessor monsoon_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) { return monsoon_pq.PQsetNoticeProcessor(conn, proc, arg); }

/// The server's SQLSTATE for a failed result ("42601"), or NULL for an error of libpq's own.
static inline const char *monsoon_pq_sqlstate(const PGresult *result) {
    return monsoon_pq.PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

/// The server's one-line message for a failed result, without "ERROR:" or the statement's text.
static inline const char *monsoon_pq_primary_message(const PGresult *result) {
    return monsoon_pq.PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}

/// The constraint a failed result broke ("monsoon_jobs_key_key"), or NULL.
static inline const char *monsoon_pq_constraint(const PGresult *result) {
    return monsoon_pq.PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME);
}

static void monsoon_pq_discard_notice(void *context, const char *message) {
    (void)context;
    (void)message;
}

/// Drops the server's notices and warnings ("relation already exists, skipping") instead of
/// letting libpq print them on standard error, where they would break a command's one-line
/// messages; every failure that matters comes back as an error result.
static inline void monsoon_pq_discard_notices(PGconn *connection) {
    monsoon_pq.PQsetNoticeProcessor(connection, monsoon_pq_discard_notice, NULL);
}

#endif
