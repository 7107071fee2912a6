#!/usr/bin/env bash
# A throwaway PostgreSQL server for the VaultKitPostgres tests.
#
#   eval "$(scripts/postgres-test-cluster.sh start)"   # prints the exports below
#   swift test --skip-build --disable-xctest --filter VaultKitPostgresTests
#   scripts/postgres-test-cluster.sh stop "$VAULTKIT_TEST_POSTGRES_DIR"
#
# start: initdb in a new temporary directory (as `nobody` when run as root: the server
# refuses to run as root), listening on a free port of 127.0.0.1 and a Unix socket in that
# directory, scram-sha-256 password auth for everyone, a role and database `vaultkit`
# with a random password. Prints VAULTKIT_TEST_POSTGRES_URL (no password),
# PGPASSFILE (0600, holding the password; libpq reads it), VAULTKIT_TEST_POSTGRES_DIR,
# and VAULTKIT_TEST_POSTGRES_CA / _OTHER_CA: the CA that signed the server's TLS
# certificate (for 127.0.0.1) and an unrelated one.
# With VAULTKIT_TEST_POSTGRES_STANDBY=1, also a hot standby streaming from it (a base
# backup taken with pg_basebackup, on a port of its own, same TLS certificate):
# VAULTKIT_TEST_POSTGRES_STANDBY_URL. The superuser `postgres` may pause its replay
# (pg_wal_replay_pause), as the standby tests do to make it lag.
# stop DIR: stops the server(s) and removes the directory.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -n "$bindir" ]] || { echo "postgres-test-cluster: no PostgreSQL server; run scripts/install-deps.sh --test" >&2; exit 1; }

as_owner() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u nobody -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/vaultkit-postgres.XXXXXX")
    chmod 0755 "$dir"
    mkdir -m 0700 "$dir/data" "$dir/socket"
    [[ $(id -u) -eq 0 ]] && chown nobody "$dir/data" "$dir/socket"
    password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
    # The superuser's password reaches initdb through a file, never argv.
    (umask 077; printf '%s\n' "$password" >"$dir/data/.pw")
    [[ $(id -u) -eq 0 ]] && chown nobody "$dir/data/.pw"
    as_owner "$bindir/initdb" -D "$dir/data/cluster" -U postgres --auth=scram-sha-256 --pwfile="$dir/data/.pw" \
        --encoding=UTF8 --no-instructions >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/data/.pw"
    # TLS: a throwaway CA signs the server's certificate for 127.0.0.1 only, so tests can
    # connect with sslmode=verify-full, see a name mismatch (host "localhost"), and hold
    # an unrelated CA as a client that trusts the wrong authority would.
    tls="$dir/tls"
    mkdir -m 0755 "$tls"
    new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
    new_key "$tls/ca.key" && new_key "$tls/other-ca.key" && new_key "$tls/server.key"
    openssl req -x509 -new -key "$tls/ca.key" -subj "/CN=VaultKit test CA" -days 7 -out "$tls/ca.pem" 2>/dev/null
    openssl req -x509 -new -key "$tls/other-ca.key" -subj "/CN=Another CA" -days 7 -out "$tls/other-ca.pem" 2>/dev/null
    openssl req -new -key "$tls/server.key" -subj "/CN=127.0.0.1" -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 7 \
        -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
    rm -f "$tls/ca.key" "$tls/other-ca.key" "$tls/server.csr" "$tls/server.ext" "$tls/ca.srl"
    chmod 0600 "$tls/server.key"
    [[ $(id -u) -eq 0 ]] && chown nobody "$tls/server.key"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bindir/pg_ctl" -D "$dir/data/cluster" -l "$dir/data/server.log" -w -s \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/socket -c fsync=on -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server.key" start >&2
    (umask 077; printf '127.0.0.1:%s:*:postgres:%s\n127.0.0.1:%s:*:vaultkit:%s\n' "$port" "$password" "$port" "$password" >"$dir/pgpass")
    # The test role: not a superuser, owning its database. SQL on stdin, not in argv.
    PGPASSFILE="$dir/pgpass" "$bindir/psql" -q -X -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$port/postgres" >&2 <<SQL
CREATE ROLE vaultkit LOGIN PASSWORD '$password';
CREATE DATABASE vaultkit OWNER vaultkit;
SQL
    if [[ ${VAULTKIT_TEST_POSTGRES_STANDBY:-0} == 1 ]]; then
        standby_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        mkdir -m 0700 "$dir/socket-standby"
        # The base backup and the standby connect as `postgres` (initdb's pg_hba.conf allows
        # replication from 127.0.0.1 with a password), through the owner's copy of the
        # password file, which -R names in the standby's primary_conninfo.
        (umask 077; cp "$dir/pgpass" "$dir/data/standby.pgpass")
        if [[ $(id -u) -eq 0 ]]; then chown nobody "$dir/data/standby.pgpass" "$dir/socket-standby"; fi
        PGPASSFILE="$dir/data/standby.pgpass" as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres \
            -D "$dir/data/standby" -R -X stream -c fast >"$dir/basebackup.log" 2>&1 \
            || { cat "$dir/basebackup.log" >&2; exit 1; }
        as_owner "$bindir/pg_ctl" -D "$dir/data/standby" -l "$dir/data/standby.log" -w -s \
            -o "-c listen_addresses=127.0.0.1 -c port=$standby_port -c unix_socket_directories=$dir/socket-standby -c hot_standby=on -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server.key" start >&2
        (umask 077; printf '127.0.0.1:%s:*:postgres:%s\n127.0.0.1:%s:*:vaultkit:%s\n' "$standby_port" "$password" "$standby_port" "$password" >>"$dir/pgpass")
        echo "export VAULTKIT_TEST_POSTGRES_STANDBY_URL=postgresql://vaultkit@127.0.0.1:$standby_port/vaultkit"
    fi
    echo "export VAULTKIT_TEST_POSTGRES_URL=postgresql://vaultkit@127.0.0.1:$port/vaultkit"
    echo "export PGPASSFILE=$dir/pgpass"
    echo "export VAULTKIT_TEST_POSTGRES_DIR=$dir"
    echo "export VAULTKIT_TEST_POSTGRES_CA=$tls/ca.pem"
    echo "export VAULTKIT_TEST_POSTGRES_OTHER_CA=$tls/other-ca.pem"
    ;;
stop)
    dir=${2:?usage: postgres-test-cluster.sh stop DIR}
    [[ -d "$dir/data/standby" ]] && as_owner "$bindir/pg_ctl" -D "$dir/data/standby" -m fast -w -s stop >&2 || true
    [[ -d "$dir/data/cluster" ]] && as_owner "$bindir/pg_ctl" -D "$dir/data/cluster" -m fast -w -s stop >&2 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: postgres-test-cluster.sh start | stop DIR" >&2
    exit 2
    ;;
esac
