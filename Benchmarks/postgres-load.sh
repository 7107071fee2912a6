#!/usr/bin/env bash
# PostgreSQL under load (issue 27): K client processes (1, 2, 4, 8) on one vault of
# 10,000 items (~50 B secrets, raw key), each looping random gets and sets for
# POINT_SECONDS, against the bare baseline: pgbench -M prepared with the same K over
# 10,000 rows of a plain table (SELECT by key; INSERT ... ON CONFLICT DO UPDATE), each
# bare point run right before its VaultKit point.
#
#   Benchmarks/postgres-load.sh                      # ~5 min on 2 cores
#   POINT_SECONDS=10 KS="1 4" WORKLOADS="unrelated 95/5" Benchmarks/postgres-load.sh
#   LOAD_DRIVER=/path/to/PostgresLoad ...   # a driver built earlier (an A/B of the library)
#   LOAD_SHARDS=16 [LOAD_OWN_SHARD=1] ...    # the items over 16 vaults (each process on one):
#                                            # what splitting the write lock could buy at most
#   LOAD_DRIVER=/path/a LOAD_DRIVER_B=/path/b ROUNDS=3 ...
#                                            # an A/B: per point and round, bare, then A and B
#                                            # (B first in even rounds); medians in
#                                            # results/postgres-load-ab.csv (LOAD_AB_CSV)
#   LOAD_STANDBY=1 [LOAD_STANDBY_STALENESS_MS=1000] ...
#                                            # the cluster gets a hot standby, and driver B (A
#                                            # itself unless LOAD_DRIVER_B is given) sends gets
#                                            # to it: an A/B of reading from a standby
#   WARMUP_SECONDS=20 ...                    # each driver process runs the workload, unmeasured,
#                                            # for that long before its point (a backend that has
#                                            # been writing for a while; pgbench needs none)
#   LOAD_STATEMENTS=1 ...                    # also the server's statements per VaultKit point
#                                            # (pg_stat_statements): results/postgres-load-statements.md
#
# Workloads: reads only; reads while another client commits ~150 times/s to an
# unrelated table (pgbench -R 150, for the bare point too); 95/5 and 50/50 reads/writes.
# Starts its own cluster (scripts/postgres-test-cluster.sh: TCP, TLS, fsync and
# synchronous_commit on; autovacuum off, so none runs in a measurement, and a VACUUM of
# every table before each point instead), stops it on exit.
# Writes results/postgres-load.csv (ops/s, p50, p99 per point, the ratio to bare, and the
# machine's CPU time per operation: every process's, from /proc/stat over the point's
# middle SECONDS - 1, so clients and server together) and prints it as a markdown table;
# plot.sh draws postgres-load.png from the CSV.
# The server and the clients share the CPUs (nothing is pinned): under load that is
# what a backend host sees. After the run a check process verifies the vault and reads
# every item.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${POINT_SECONDS:-5}
warmup=${WARMUP_SECONDS:-0}
ks=${KS:-"1 2 4 8"}
count=${ITEMS:-10000}
cluster="$here/../scripts/postgres-test-cluster.sh"

workloads=${WORKLOADS:-"reads unrelated 95/5 50/50"}
driver=${LOAD_DRIVER:-}
driver_b=${LOAD_DRIVER_B:-}
rounds=${ROUNDS:-1}
if [[ -z $driver ]]; then
    swift build -c release --package-path "$here" --product PostgresLoad >&2
    driver="$(swift build -c release --package-path "$here" --show-bin-path)/PostgresLoad"
fi

standby=${LOAD_STANDBY:-0}
if [[ $standby == 1 ]]; then
    export VAULTKIT_TEST_POSTGRES_STANDBY=1
    driver_b=${driver_b:-$driver}
fi
eval "$("$cluster" start)"
work=$(mktemp -d "${TMPDIR:-/tmp}/vaultkit-load.XXXXXX")
cleanup() { "$cluster" stop "$VAULTKIT_TEST_POSTGRES_DIR"; rm -rf "$work"; }
trap cleanup EXIT
port=${VAULTKIT_TEST_POSTGRES_URL##*:}; port=${port%%/*}
psql -q -X "postgresql://postgres@127.0.0.1:$port/vaultkit" -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
url=$VAULTKIT_TEST_POSTGRES_URL
pgb=(pgbench -h 127.0.0.1 -p "$port" -U vaultkit -n -M prepared)

# The bare table: the same number of rows, a value as long as a sealed item row.
statements=${LOAD_STATEMENTS:-0}
if [[ $statements == 1 ]]; then
    # The statistics module must be loaded at server start: restart with it (same options).
    superuser="postgresql://postgres@127.0.0.1:$port/vaultkit"
    psql -q -X "$superuser" -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" >/dev/null
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [[ $(id -u) -eq 0 ]]; then as_owner=(runuser -u nobody --); else as_owner=(); fi
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$VAULTKIT_TEST_POSTGRES_DIR/data/cluster" -w -s restart >/dev/null
    psql -q -X "$superuser" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
    statements_md="$here/results/postgres-load-statements.md"
    printf '# The server'"'"'s statements per VaultKit operation (LOAD_STATEMENTS=1, %s)\n' "$(date -u +%Y-%m-%d)" >"$statements_md"
fi

psql -q -X "$url" -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE TABLE bare (id int PRIMARY KEY, value bytea NOT NULL);
INSERT INTO bare SELECT i, decode(repeat('5a', 140), 'hex') FROM generate_series(0, $count - 1) AS i;
CREATE TABLE unrelated (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
VACUUM ANALYZE bare;
SQL
printf '\\set id random(0, %d)\nSELECT value FROM bare WHERE id = :id;\n' "$((count - 1))" >"$work/select.sql"
printf "\\\\set id random(0, %d)\nINSERT INTO bare (id, value) VALUES (:id, decode(repeat('5b', 140), 'hex')) ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value;\n" "$((count - 1))" >"$work/upsert.sql"
printf 'INSERT INTO unrelated DEFAULT VALUES;\n' >"$work/unrelated.sql"

"$driver" create "$url" load "$count" "$work/key" >&2
psql -q -X "$url" -c "VACUUM ANALYZE vaultkit_header, vaultkit_items, vaultkit_manifest" >/dev/null

# p50 and p99 (ms) of the microsecond latencies in the files given (last column).
percentiles() {
    python3 - "$@" <<'PY'
import sys
values = sorted(int(line.split()[-1]) for path in sys.argv[1:] for line in open(path) if line.strip())
if not values:
    print("0 0 0"); sys.exit()
pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] / 1000
print(len(values), f"{pick(0.50):.3f}", f"{pick(0.99):.3f}")
PY
}

# cpu_window DELAY DURATION OUT: in the background, the machine's busy CPU time (ms, every
# process) from DELAY seconds from now for DURATION seconds, written to OUT.
cpu_window() {
    (
        sleep "$1"
        read -r _ user nice system _ _ irq softirq _ </proc/stat
        local before=$((user + nice + system + irq + softirq))
        sleep "$2"
        read -r _ user nice system _ _ irq softirq _ </proc/stat
        echo $(((user + nice + system + irq + softirq - before) * 1000 / $(getconf CLK_TCK))) >"$3"
    ) &
}

# cpu_per_op BUSY_MS_FILE OPS_PER_S: microseconds of CPU per operation over the window.
cpu_per_op() {
    python3 -c "print(f'{$(cat "$1") * 1000 / max($2 * (${seconds} - 1), 1):.0f}')"
}

# Starts the unrelated committer (for the length of a point and a little more): pid in $committer.
unrelated_start() {
    "${pgb[@]}" -c 1 -j 1 -R 150 -T "$((${seconds%.*} + 3))" -f "$work/unrelated.sql" vaultkit >"$work/unrelated.log" 2>&1 &
    committer=$!
    sleep 1
}

# bare WORKLOAD K WRITE_PERCENT: one pgbench point; prints "ops/s p50 p99 cpu_us_per_op".
bare_point() {
    local k=$1 writes=$2 scripts ops
    rm -f "$work"/bare_log*
    if (( writes == 0 )); then scripts=(-f "$work/select.sql"); else scripts=(-f "$work/select.sql@$((100 - writes))" -f "$work/upsert.sql@$writes"); fi
    cpu_window 0.5 "$((${seconds%.*} - 1))" "$work/bare.cpu"
    (cd "$work" && "${pgb[@]}" -c "$k" -j "$k" -T "${seconds%.*}" -l --log-prefix=bare_log "${scripts[@]}" vaultkit >"$work/bare.out" 2>&1)
    wait $!
    # pgbench's log: client, transaction, latency (us), script, epoch, us.
    awk '{ print $3 }' "$work"/bare_log* >"$work/bare.lat"
    read -r n p50 p99 < <(percentiles "$work/bare.lat")
    ops=$(python3 -c "print(f'{$n / ${seconds}:.0f}')")
    echo "$ops $p50 $p99 $(cpu_per_op "$work/bare.cpu" "$ops")"
}

# vault DRIVER K WRITE_PERCENT [STANDBY_URL]: K driver processes started together (gets sent
# to the standby at STANDBY_URL, if given); prints "ops/s p50 p99 errors cpu_us_per_op".
vault_point() {
    local driver=$1 k=$2 writes=$3 standby_url=${4:-} start pids=() errors=0 ops
    # Time to open and verify the vault (warm) before the clock starts.
    start=$(( $(date +%s%3N) + 2000 + 1000 * k + 1000 * warmup ))
    for ((i = 0; i < k; i++)); do
        LOAD_WARMUP=$((warmup > 0 ? 1 : 0)) LOAD_STANDBY_URL=$standby_url "$driver" run "$url" load "$count" "$work/key" "$writes" "$start" "$seconds" "$work/vault.$i.lat" "$((RANDOM * 1000 + i + 1))" >"$work/vault.$i.out" &
        pids+=($!)
    done
    local delay
    delay=$(python3 -c "print(max(($start - $(date +%s%3N)) / 1000, 0))")
    cpu_window "$(python3 -c "print($delay + 0.5)")" "$((${seconds%.*} - 1))" "$work/vault.cpu"
    pids+=($!)
    # The statements from the clock's start: not the openings and warm verifications.
    if [[ $statements == 1 ]]; then
        (sleep "$delay"; psql -q -X "$superuser" -c "SELECT pg_stat_statements_reset()" >/dev/null) &
        pids+=($!)
    fi
    for pid in "${pids[@]}"; do wait "$pid"; done
    for ((i = 0; i < k; i++)); do errors=$((errors + $(awk '{ print $2 }' "$work/vault.$i.out"))); done
    read -r n p50 p99 < <(percentiles "$work"/vault.*.lat)
    rm -f "$work"/vault.*.lat "$work"/vault.*.out
    ops=$(python3 -c "print(f'{$n / ${seconds}:.0f}')")
    [[ $statements == 1 ]] && statements_of_point "$n"
    echo "$ops $p50 $p99 $errors $(cpu_per_op "$work/vault.cpu" "$ops")"
}

# statements_of_point OPERATIONS: the point's statements, per operation, into $statements_md
# (the name of the point is $point_name).
statements_of_point() {
    {
        printf '\n## %s\n\n| calls per op | µs per op | µs per call | statement |\n|---|---|---|---|\n' "$point_name"
        psql -X -A -t "$superuser" -c "
            SELECT '| ' || round(calls::numeric / $1, 3) || ' | ' || round(total_exec_time::numeric * 1000 / $1, 1)
                   || ' | ' || round((total_exec_time / calls)::numeric * 1000, 1)
                   || ' | ' || replace(left(regexp_replace(query, '\s+', ' ', 'g'), 100), '|', '\|') || ' |'
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'vaultkit') AND query NOT LIKE '%pg_stat_statements%'
            ORDER BY total_exec_time DESC LIMIT 15"
    } >>"$statements_md"
}

mkdir -p "$here/results"
csv=${LOAD_CSV:-"$here/results/postgres-load.csv"}
ab_csv=${LOAD_AB_CSV:-"$here/results/postgres-load-ab.csv"}
ab=no
[[ -n $driver_b || $rounds != 1 ]] && ab=yes
if [[ $ab == yes ]]; then
    echo "workload,k,round,who,ops,p50_ms,p99_ms,cpu_us_per_op,errors" >"$ab_csv"
else
    echo "workload,k,vaultkit_ops,vaultkit_p50_ms,vaultkit_p99_ms,bare_ops,bare_p50_ms,bare_p99_ms,ratio,errors,vaultkit_cpu_us_per_op,bare_cpu_us_per_op" >"$csv"
fi
for workload in "reads:reads only:0:no" "unrelated:reads + unrelated commits 150/s:0:yes" "95/5:95/5:5:no" "50/50:50/50:50:no"; do
    IFS=: read -r id name writes unrelated <<<"$workload"
    [[ " $workloads " == *" $id "* ]] || continue
    for k in $ks; do
        for ((round = 1; round <= rounds; round++)); do
            committer=
            [[ $unrelated == yes ]] && unrelated_start
            point_name="$name, K = $k"
            # What the points before left dead, cleared before each (autovacuum is off so that
            # none runs inside a point): else the later points pay for the earlier ones' writes,
            # VaultKit's most (its change marker's updates are not HOT; the bare table's are).
            psql -q -X "$url" -c "VACUUM vaultkit_header, vaultkit_items, vaultkit_manifest, vaultkit_manifest_changes, bare, unrelated" >/dev/null
            read -r bops bp50 bp99 bcpu < <(bare_point "$k" "$writes")
            [[ -n $committer ]] && { kill "$committer" 2>/dev/null || true; wait "$committer" || true; committer=; }
            if [[ $ab == no ]]; then
                [[ $unrelated == yes ]] && unrelated_start
                read -r vops vp50 vp99 verr vcpu < <(vault_point "$driver" "$k" "$writes")
                [[ -n $committer ]] && { kill "$committer" 2>/dev/null || true; wait "$committer" || true; committer=; }
                ratio=$(python3 -c "print(f'{$vops / max($bops, 1):.2f}')")
                echo "$name,$k,$vops,$vp50,$vp99,$bops,$bp50,$bp99,$ratio,$verr,$vcpu,$bcpu" >>"$csv"
                echo "$name K=$k: VaultKit $vops ops/s (p50 $vp50 ms, p99 $vp99 ms, $verr errors, $vcpu us CPU/op), bare $bops ops/s (p50 $bp50, p99 $bp99, $bcpu us CPU/op): ${ratio}x" >&2
                continue
            fi
            echo "$name,$k,$round,bare,$bops,$bp50,$bp99,$bcpu,0" >>"$ab_csv"
            # B first in even rounds, so neither driver always meets the vault as the other left it.
            order=(a b)
            (( round % 2 == 0 )) && order=(b a)
            for who in "${order[@]}"; do
                [[ $who == b && -z $driver_b ]] && continue
                [[ $who == a ]] && which=$driver || which=$driver_b
                standby_url=
                [[ $who == b && $standby == 1 ]] && standby_url=$VAULTKIT_TEST_POSTGRES_STANDBY_URL
                [[ $unrelated == yes ]] && unrelated_start
                read -r vops vp50 vp99 verr vcpu < <(vault_point "$which" "$k" "$writes" "$standby_url")
                [[ -n $committer ]] && { kill "$committer" 2>/dev/null || true; wait "$committer" || true; committer=; }
                echo "$name,$k,$round,$who,$vops,$vp50,$vp99,$vcpu,$verr" >>"$ab_csv"
                echo "$name K=$k round $round: $who $vops ops/s (p99 $vp99 ms, $verr errors, $vcpu us CPU/op), bare $bops" >&2
            done
        done
    done
done
"$driver" check "$url" load "$count" "$work/key" >&2

if [[ $ab == yes ]]; then
    python3 - "$ab_csv" <<'PY'
import csv, statistics, sys
from collections import defaultdict
points = defaultdict(lambda: defaultdict(list))
for r in csv.DictReader(open(sys.argv[1])):
    points[(r["workload"], r["k"])][r["round"]].append(r)
median = lambda values: statistics.median(values) if values else float("nan")
print("Medians over rounds; each ratio is against that round's own pgbench point.\n")
print("| workload | K | A ops/s (ratio) | B ops/s (ratio) | B / A | p99 ms, A / B | CPU µs/op, A / B / bare |")
print("|---|---|---|---|---|---|---|")
for (workload, k), rounds in points.items():
    series = defaultdict(list)
    for rows in rounds.values():
        by = {r["who"]: r for r in rows}
        bare = float(by["bare"]["ops"])
        series["bare_cpu"].append(float(by["bare"]["cpu_us_per_op"]))
        for who in ("a", "b"):
            if who in by:
                series[who].append(float(by[who]["ops"]))
                series[who + "_ratio"].append(float(by[who]["ops"]) / max(bare, 1))
                series[who + "_p99"].append(float(by[who]["p99_ms"]))
                series[who + "_cpu"].append(float(by[who]["cpu_us_per_op"]))
        if "a" in by and "b" in by:
            series["b_over_a"].append(float(by["b"]["ops"]) / max(float(by["a"]["ops"]), 1))
    b = f"{median(series['b']):,.0f} ({median(series['b_ratio']):.2f}x)" if series["b"] else "-"
    print(f"| {workload} | {k} | {median(series['a']):,.0f} ({median(series['a_ratio']):.2f}x) | {b} | "
          f"{median(series['b_over_a']):.2f} | {median(series['a_p99']):.2f} / {median(series['b_p99']):.2f} | "
          f"{median(series['a_cpu']):.0f} / {median(series['b_cpu']):.0f} / {median(series['bare_cpu']):.0f} |")
PY
    exit 0
fi

python3 - "$csv" <<'PY'
import csv, sys
print("| workload | K | VaultKit ops/s | p50 / p99 ms | bare ops/s | p50 / p99 ms | ratio | CPU µs/op, VaultKit / bare |")
print("|---|---|---|---|---|---|---|---|")
for r in csv.DictReader(open(sys.argv[1])):
    print(f"| {r['workload']} | {r['k']} | {int(r['vaultkit_ops']):,} | {r['vaultkit_p50_ms']} / {r['vaultkit_p99_ms']} | "
          f"{int(r['bare_ops']):,} | {r['bare_p50_ms']} / {r['bare_p99_ms']} | {r['ratio']}x | "
          f"{r['vaultkit_cpu_us_per_op']} / {r['bare_cpu_us_per_op']} |")
PY
