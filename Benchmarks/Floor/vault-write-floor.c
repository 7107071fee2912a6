// The floor for one durable `vault set` process, in C: start, open the vault's SQLite file
// read-write (WAL, synchronous=FULL, as VaultKit opens it) and, in one BEGIN IMMEDIATE
// transaction, read one manifest bucket and hash it (keyed BLAKE2b), replace one item's
// row with a freshly sealed secretbox of that item's size, store the bucket's new digest,
// the header's manifest root and tag and the next generation, then COMMIT, which syncs
// the WAL. No key derivation or unwrapping, no argument parsing, no standard input: what
// no tool that writes durably and keeps such a manifest can avoid.
// It stores made-up digests: give it a copy of a vault, never one in use.
// Usage: vault-write-floor VAULT_FILE_COPY
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static int run(sqlite3 *db, const char *sql) {
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

static int one_row(sqlite3 *db, const char *sql, sqlite3_stmt **statement) {
    return sqlite3_prepare_v2(db, sql, -1, statement, NULL) == SQLITE_OK && sqlite3_step(*statement) == SQLITE_ROW;
}

// Runs a statement whose parameters are up to four blobs (NULL: an integer `number`).
static int write_row(sqlite3 *db, const char *sql, sqlite3_int64 number, const void *blobs[4], const int lengths[4]) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) != SQLITE_OK) return 0;
    for (int i = 0; i < sqlite3_bind_parameter_count(statement); i++) {
        if (blobs[i]) sqlite3_bind_blob(statement, i + 1, blobs[i], lengths[i], SQLITE_STATIC);
        else sqlite3_bind_int64(statement, i + 1, number);
    }
    int done = sqlite3_step(statement) == SQLITE_DONE;
    sqlite3_finalize(statement);
    return done;
}

int main(int argc, char **argv) {
    sqlite3 *db;
    sqlite3_stmt *bucket, *item, *generation;
    unsigned char key[crypto_secretbox_KEYBYTES], nonce[crypto_secretbox_NONCEBYTES], digest[32], root[32], tag[32];
    if (argc != 2 || sodium_init() < 0) return 2;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return 1;
    // A connection that stays open (the agent's) does not checkpoint at every commit.
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
    if (!run(db, "PRAGMA journal_mode = WAL") || !run(db, "PRAGMA synchronous = FULL") || !run(db, "BEGIN IMMEDIATE")) return 1;
    if (!one_row(db, "SELECT bucket, digest FROM vault_manifest ORDER BY bucket LIMIT 1", &bucket)) return 1;
    randombytes_buf(key, sizeof key);
    crypto_generichash(digest, sizeof digest, sqlite3_column_blob(bucket, 1), (size_t)sqlite3_column_bytes(bucket, 1), key, sizeof key);
    if (!one_row(db, "SELECT lookup_id, service_tag, length(sealed) FROM vault_items ORDER BY lookup_id LIMIT 1", &item)) return 1;
    if (!one_row(db, "SELECT generation + 1 FROM vault_generation WHERE singleton = 1", &generation)) return 1;
    int sealed_length = sqlite3_column_int(item, 2);
    if (sealed_length < (int)crypto_secretbox_MACBYTES) return 1;
    size_t plain_length = (size_t)sealed_length - crypto_secretbox_MACBYTES;
    unsigned char *plain = calloc(1, plain_length + 1), *box = malloc((size_t)sealed_length);
    randombytes_buf(nonce, sizeof nonce);
    crypto_secretbox_easy(box, plain, plain_length, nonce, key);
    crypto_generichash(root, sizeof root, digest, sizeof digest, key, sizeof key);
    crypto_generichash(tag, sizeof tag, root, sizeof root, key, sizeof key);

    const void *row[4] = {sqlite3_column_blob(item, 0), sqlite3_column_blob(item, 1), nonce, box};
    const int row_lengths[4] = {sqlite3_column_bytes(item, 0), sqlite3_column_bytes(item, 1), sizeof nonce, sealed_length};
    const void *manifest[4] = {NULL, digest}, *header[4] = {root, tag}, *counter[4] = {NULL};
    const int manifest_lengths[4] = {0, sizeof digest}, header_lengths[4] = {sizeof root, sizeof tag}, none[4] = {0};
    if (!write_row(db, "INSERT OR REPLACE INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES (?, ?, ?, ?)", 0, row, row_lengths)
        || !write_row(db, "INSERT OR REPLACE INTO vault_manifest (bucket, digest) VALUES (?, ?)", sqlite3_column_int64(bucket, 0), manifest, manifest_lengths)
        || !write_row(db, "UPDATE vault_header SET manifest_root = ?, manifest_tag = ? WHERE singleton = 1", 0, header, header_lengths)
        || !write_row(db, "UPDATE vault_generation SET generation = ? WHERE singleton = 1", sqlite3_column_int64(generation, 0), counter, none)) return 1;
    sqlite3_finalize(bucket);
    sqlite3_finalize(item);
    sqlite3_finalize(generation);
    if (!run(db, "COMMIT")) return 1;
    puts("ok");
    free(box);
    free(plain);
    sqlite3_close(db);
    return 0;
}
