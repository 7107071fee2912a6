// The floor for one `vault get` process, in C: start, open the vault's SQLite file
// read-only, read the first manifest bucket and hash it (keyed BLAKE2b), read one item by
// its primary key, open one secretbox of that item's size, write 8 bytes and a newline.
// No key derivation, no key unwrapping, no argument parsing: what no tool can avoid.
// The box is sealed here under a random key, so opening it costs what opening the
// stored one would. Usage: vault-floor VAULT_FILE
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static int one_row(sqlite3 *db, const char *sql, sqlite3_stmt **statement) {
    return sqlite3_prepare_v2(db, sql, -1, statement, NULL) == SQLITE_OK && sqlite3_step(*statement) == SQLITE_ROW;
}

int main(int argc, char **argv) {
    sqlite3 *db;
    sqlite3_stmt *bucket, *item;
    unsigned char key[crypto_secretbox_KEYBYTES], nonce[crypto_secretbox_NONCEBYTES], digest[32];
    if (argc != 2 || sodium_init() < 0) return 2;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return 1;
    if (!one_row(db, "SELECT digest FROM vault_manifest ORDER BY bucket LIMIT 1", &bucket)) return 1;
    randombytes_buf(key, sizeof key);
    crypto_generichash(digest, sizeof digest, sqlite3_column_blob(bucket, 0), (size_t)sqlite3_column_bytes(bucket, 0), key, sizeof key);
    if (!one_row(db, "SELECT sealed FROM vault_items WHERE lookup_id = (SELECT min(lookup_id) FROM vault_items)", &item)) return 1;
    size_t length = (size_t)sqlite3_column_bytes(item, 0);
    if (length < crypto_secretbox_MACBYTES + 8) return 1;
    size_t plain_length = length - crypto_secretbox_MACBYTES;
    unsigned char *box = malloc(length), *plain = malloc(plain_length);
    randombytes_buf(nonce, sizeof nonce);
    crypto_secretbox_easy(box, sqlite3_column_blob(item, 0), plain_length, nonce, key);
    if (crypto_secretbox_open_easy(plain, box, length, nonce, key) != 0) return 1;
    fwrite(plain, 1, 8, stdout);
    putchar('\n');
    sodium_memzero(plain, plain_length);
    free(box);
    free(plain);
    sqlite3_finalize(bucket);
    sqlite3_finalize(item);
    sqlite3_close(db);
    return 0;
}
