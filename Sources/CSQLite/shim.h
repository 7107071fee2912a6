#ifndef VAULTKIT_CSQLITE_SHIM_H
#define VAULTKIT_CSQLITE_SHIM_H

#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: one fixed-arity
// wrapper for the integer on/off options (SQLITE_DBCONFIG_DEFENSIVE, ...).
static inline int vaultkit_sqlite3_db_config_flag(sqlite3 *db, int op, int on) {
    int result = 0;
    return sqlite3_db_config(db, op, on, &result);
}

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot
// import: these wrappers bind a copy of the caller's bytes.
static inline int vaultkit_sqlite3_bind_blob_copy(sqlite3_stmt *stmt, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(stmt, index, bytes, count, SQLITE_TRANSIENT);
}

static inline int vaultkit_sqlite3_bind_text_copy(sqlite3_stmt *stmt, int index, const char *text, int count) {
    return sqlite3_bind_text(stmt, index, text, count, SQLITE_TRANSIENT);
}

#endif
