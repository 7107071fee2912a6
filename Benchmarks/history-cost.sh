#!/usr/bin/env bash
# Issue 29, item 4: what item history costs (HistoryCost/HistoryCost.swift), release build.
#
#   Benchmarks/history-cost.sh [ITEMS] [PAIRS] [SCALE_ITEMS] [VERSIONS] [ROUNDS]
#
# 1. A durable `set` that keeps history against one that does not, interleaved pair by
#    pair on one vault of 2 x ITEMS items (default 1,000; 2,000 pairs): on a file vault,
#    then on PostgreSQL (a throwaway cluster, scripts/postgres-test-cluster.sh: fsync on,
#    TLS, autovacuum off, the server pinned to the last CPU as postgres.sh does).
# 2. A file vault of SCALE_ITEMS items (default 100,000) with VERSIONS kept versions each
#    (default 10) against the same items without history: get, list, verify and size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
items=${1:-1000} pairs=${2:-2000} scale_items=${3:-100000} versions=${4:-10} rounds=${5:-5}
cd "$here"
swift build -c release --product HistoryCost >&2
bin=$(swift build -c release --show-bin-path)/HistoryCost

echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$bin" set file "$items" "$pairs"

cluster="$here/../scripts/postgres-test-cluster.sh"
eval "$("$cluster" start)"
trap '"$cluster" stop "$VAULTKIT_TEST_POSTGRES_DIR"' EXIT
port=${VAULTKIT_TEST_POSTGRES_URL##*:}; port=${port%%/*}
psql -q "postgresql://postgres@127.0.0.1:$port/vaultkit" -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
client=()
cpus=$(nproc)
if (( cpus > 1 )); then
    server_cpu=$((cpus - 1))
    postmaster=$(head -1 "$VAULTKIT_TEST_POSTGRES_DIR/data/cluster/postmaster.pid")
    for pid in "$postmaster" $(pgrep -P "$postmaster"); do taskset -a -p -c "$server_cpu" "$pid" >/dev/null; done
    client=(taskset -c "0-$((server_cpu - 1))")
fi
"${client[@]}" "$bin" set postgres "$items" "$pairs"

"$bin" scale "$scale_items" "$versions" "$rounds"
