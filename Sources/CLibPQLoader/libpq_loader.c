// libpq, loaded when first used.
//
// Why: every program that links VaultKitPostgres (the `vault` CLI among them) would
// otherwise load libpq and the ~20 libraries it needs (OpenSSL, Kerberos, LDAP) at start,
// before `main`: most of a `vault get`'s start-up on a file vault
// (Benchmarks/README.md, "The agent"). So this file defines, with libpq's own prototypes,
// exactly the functions VaultKitPostgres calls; each looks the real one up in libpq on
// first use. The program is not linked against libpq at all (CLibPQ names no library to
// link and uses no pkg-config), so only the first PostgreSQL call pays for loading it.
//
// Without libpq installed, each function answers as libpq does for a failure: no
// connection (CONNECTION_BAD) with a message saying libpq is missing.

#include "../CLibPQ/shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static void *libpq;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) {
#if defined(__APPLE__)
    static const char *const names[] = {"libpq.5.dylib", "/opt/homebrew/opt/libpq/lib/libpq.5.dylib", "/usr/local/opt/libpq/lib/libpq.5.dylib", NULL};
#else
    static const char *const names[] = {"libpq.so.5", "libpq.so", NULL};
#endif
    for (int i = 0; names[i] != NULL && libpq == NULL; i++) libpq = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
}

static void *symbol(const char *name) {
    pthread_once(&loaded, load);
    return libpq == NULL ? NULL : dlsym(libpq, name);
}

// One cached pointer per function, looked up once (a race looks up the same pointer twice).
#define FORWARD(ret, name, params, args, fallback)                                  \
    ret name params {                                                                \
        static ret(*cached) params;                                                  \
        ret(*function) params = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);         \
        if (function == NULL) {                                                      \
            function = (ret(*) params)symbol(#name);                                 \
            if (function == NULL) return fallback;                                   \
            __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                   \
        }                                                                            \
        return function args;                                                        \
    }

#define FORWARD_VOID(name, params, args)                                            \
    void name params {                                                               \
        static void(*cached) params;                                                 \
        void(*function) params = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);        \
        if (function == NULL) {                                                      \
            function = (void(*) params)symbol(#name);                                \
            if (function == NULL) return;                                            \
            __atomic_store_n(&cached, function, __ATOMIC_RELEASE);                   \
        }                                                                            \
        function args;                                                               \
    }

static char missing[] = "libpq (PostgreSQL's client library) could not be loaded; install it (Debian: libpq5)\n";

FORWARD(PGconn *, PQconnectdb, (const char *conninfo), (conninfo), NULL)
FORWARD(PGconn *, PQconnectdbParams, (const char *const *keywords, const char *const *values, int expand_dbname),
        (keywords, values, expand_dbname), NULL)
FORWARD_VOID(PQfinish, (PGconn *conn), (conn))
FORWARD(ConnStatusType, PQstatus, (const PGconn *conn), (conn), CONNECTION_BAD)
FORWARD(char *, PQerrorMessage, (const PGconn *conn), (conn), missing)
FORWARD(int, PQconnectionUsedPassword, (const PGconn *conn), (conn), 0)
FORWARD(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg), NULL)
FORWARD(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query), NULL)
FORWARD(PGresult *, PQexecPrepared,
        (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat),
        (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat), NULL)
FORWARD(int, PQsendPrepare, (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes),
        (conn, stmtName, query, nParams, paramTypes), 0)
FORWARD(int, PQsendQueryPrepared,
        (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat),
        (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat), 0)
FORWARD(PGresult *, PQgetResult, (PGconn *conn), (conn), NULL)
FORWARD(int, PQenterPipelineMode, (PGconn *conn), (conn), 0)
FORWARD(int, PQexitPipelineMode, (PGconn *conn), (conn), 0)
FORWARD(int, PQpipelineSync, (PGconn *conn), (conn), 0)
FORWARD(ExecStatusType, PQresultStatus, (const PGresult *res), (res), PGRES_FATAL_ERROR)
FORWARD(char *, PQresultErrorMessage, (const PGresult *res), (res), missing)
FORWARD(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode), NULL)
FORWARD_VOID(PQclear, (PGresult *res), (res))
FORWARD(int, PQntuples, (const PGresult *res), (res), 0)
FORWARD(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), NULL)
FORWARD(int, PQgetlength, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), 0)
FORWARD(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num), 1)
FORWARD(char *, PQcmdTuples, (PGresult *res), (res), missing + sizeof missing - 1)
FORWARD_VOID(PQfreemem, (void *ptr), (ptr))
FORWARD(PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg), NULL)
FORWARD_VOID(PQconninfoFree, (PQconninfoOption *connOptions), (connOptions))
