#!/usr/bin/env bash
# The PostgreSQL benchmarks (Postgres/Postgres.swift) on a throwaway server, with the
# server on CPUs of its own:
#
#   Benchmarks/postgres.sh [benchmark options...]   # e.g. --filter '.*interleaved.*'
#
# Starts a cluster (scripts/postgres-test-cluster.sh: fsync on, TLS), turns autovacuum
# off (so no vacuum or analyze runs in the middle of a measurement), pins the server to
# the last CPU and the benchmark to the others, runs `swift package benchmark --target
# Postgres` with the options given (markdown by default), and stops the cluster, also
# on failure. Why pin: on a small machine the client and the backends of two
# connections share the CPUs, and a backend that lands on the client's CPU answers up to
# twice as slowly as one that does not, whichever call it serves; the "control" pair
# (two identical bare SELECTs) shows it. With one CPU nothing is pinned.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/../scripts/postgres-test-cluster.sh"
eval "$("$cluster" start)"
trap '"$cluster" stop "$VAULTKIT_TEST_POSTGRES_DIR"' EXIT
port=${VAULTKIT_TEST_POSTGRES_URL##*:}; port=${port%%/*}
superuser="postgresql://postgres@127.0.0.1:$port/vaultkit"
psql -q "$superuser" -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null

client=()
cpus=$(nproc)
if (( cpus > 1 )); then
    server_cpu=$((cpus - 1))
    postmaster=$(head -1 "$VAULTKIT_TEST_POSTGRES_DIR/data/cluster/postmaster.pid")
    # The postmaster and the processes it has started; backends started later inherit it.
    for pid in "$postmaster" $(pgrep -P "$postmaster"); do taskset -a -p -c "$server_cpu" "$pid" >/dev/null; done
    client=(taskset -c "0-$((server_cpu - 1))")
fi
(( $# )) || set -- --format markdown
cd "$here"
"${client[@]}" swift package --disable-sandbox benchmark --target Postgres "$@"
