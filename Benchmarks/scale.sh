#!/usr/bin/env bash
# Scale: `vault get`, `vault set` (an existing item) and `vault list` as processes with a
# key file, and in-process open + first get, on a vault of ITEMS items (default 1,000,000),
# with wall time and peak RSS (getrusage of each child), in shuffled interleaved rounds
# beside the C floor (Floor/vault-floor.c), the load average recorded.
# The vault is bulk-built once (VaultFixtureTool import-raw: batches of 10,000) and kept in
# Benchmarks/.cache (gitignored) between runs; sets overwrite existing items, so it keeps
# its size. Not part of CI. Results: results/scale-ITEMS.md.
# Usage: ./scale.sh [ITEMS] [ROUNDS]        defaults: 1000000 items, 5 rounds
set -euo pipefail
cd "$(dirname "$0")"
ITEMS="${1:-1000000}"; ROUNDS="${2:-5}"
VAULT_BIN="$(./build-vault.sh)"
swift build -c release --product VaultFixtureTool >/dev/null
TOOL="$(swift build -c release --show-bin-path)/VaultFixtureTool"
mkdir -p .cache results
cc -O2 -o .cache/vault-floor Floor/vault-floor.c $(pkg-config --cflags --libs libsodium sqlite3)
vault=".cache/items-$ITEMS.vault"
key=".cache/items.key"
printf '\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a' > "$key"   # VaultFixtureTool's test key (32 x 0x07)
chmod 600 "$key"
if [ ! -s "$vault" ]; then
    start=$(date +%s)
    "$TOOL" import-raw "$PWD/$vault.partial" "$ITEMS"
    mv "$vault.partial" "$vault"
    echo "built $vault in $(( $(date +%s) - start )) s" >&2
fi

python3 - "$VAULT_BIN" "$TOOL" "$PWD/$vault" "$PWD/$key" "$ITEMS" "$ROUNDS" <<'PY'
import os, random, statistics, subprocess, sys, time
vault, tool, path, key, items, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
env = dict(os.environ, VAULT_PATH=path, VAULT_KEY_FILE=key, VAULT_AGENT_SOCKET=path + ".no-agent")
FIRST_GETS = 20

def run(argv, stdin=b""):
    """Wall ms and peak RSS MiB of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child.stdin.write(stdin); child.stdin.close()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = (time.perf_counter() - start) * 1e3
    if status != 0: raise SystemExit(f"{argv[:3]} failed: {child.stderr.read().decode()[:300]}")
    return elapsed, usage.ru_maxrss / 1024

def name(i): return [f"svc{i % 100}.example.com", f"user{i}"]
ops = {
    "C floor": lambda i: ([f"{os.getcwd()}/.cache/vault-floor", path], b""),
    "vault get": lambda i: ([vault, "get", *name(i)], b""),
    "vault set (existing item)": lambda i: ([vault, "set", *name(i)], b"Z" * 32 + b"\n"),
    "vault list": lambda i: ([vault, "list"], b""),
    f"in-process open + first get (x{FIRST_GETS}, per pair)": lambda i: ([tool, "first-get-raw", path, str(FIRST_GETS)], b""),
}
samples = {label: [] for label in ops}
loads, rng = [], random.Random()
for round in range(-1, rounds):  # round -1: warm-up, not recorded
    loads.append(float(open("/proc/loadavg").read().split()[0]))
    order = list(ops); rng.shuffle(order)
    item = rng.randrange(items)
    for label in order:
        ms, rss = run(*ops[label](item))
        if label.startswith("in-process"): ms /= FIRST_GETS
        if round >= 0: samples[label].append((ms, rss))
loads.append(float(open("/proc/loadavg").read().split()[0]))
floor = [ms for ms, _ in samples["C floor"]]
lines = [f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {items:,} items ({os.path.getsize(path) / 2**20:.0f} MiB file), "
         f"{rounds} shuffled interleaved rounds after a warm-up; load average (1 min) {min(loads):.2f} to {max(loads):.2f}.", "",
         "| operation | p50 ms | min-max ms | x C floor (median per round) | peak RSS MiB (max) |", "|---|---|---|---|---|"]
for label, xs in samples.items():
    ms = [m for m, _ in xs]
    ratio = statistics.median(m / f for m, f in zip(ms, floor))
    lines.append(f"| {label} | {statistics.median(ms):.1f} | {min(ms):.1f}-{max(ms):.1f} | {ratio:.1f}x | {max(r for _, r in xs):.1f} |")
open(f"results/scale-{items}.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
