#!/usr/bin/env bash
# `secret-tool lookup` through `vault secret-service` against the same lookup through
# gnome-keyring-daemon, on the same machine, interleaved: each on a private session bus of
# its own (both want org.freedesktop.secrets), the same item stored in each, one untimed
# warm-up, then ROUNDS rounds that each time one lookup against each, in a shuffled order.
# Also the resident memory (VmRSS) of each idle daemon after the runs.
# gnome-keyring-daemon is installed when missing (Debian: gnome-keyring) and unlocked
# headless with --unlock from standard input, in a throwaway XDG_DATA_HOME.
# The provider's vault is a key-file vault (no KDF), opened once at its start.
# Usage: ./secret-service.sh [ROUNDS]   (default 200). VAULT_BIN picks the vault binary
# (default: ./build-vault.sh, the release build users install).
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS="${1:-200}"

if ! command -v gnome-keyring-daemon >/dev/null || ! command -v secret-tool >/dev/null || ! command -v dbus-daemon >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnome-keyring libsecret-tools dbus-daemon >/dev/null
fi
VAULT_BIN="${VAULT_BIN:-$(./build-vault.sh)}"

work="$(mktemp -d "${TMPDIR:-/tmp}/vault-ss-bench.XXXXXX")"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -m 700 "$work/runtime" "$work/state" "$work/gk-data" "$work/gk-runtime"

start_bus() {  # sets bus_address; remembers the daemon's pid
    local pid
    { read -r bus_address; read -r pid; } < <(dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1)
    pids+=("$pid")
}

# The provider on its bus.
start_bus
vault_bus=$bus_address
VAULT_PATH="$work/bench.vault" VAULT_KEY_FILE="$work/bench.key" XDG_RUNTIME_DIR="$work/runtime" XDG_STATE_HOME="$work/state" \
    "$VAULT_BIN" init </dev/null
VAULT_PATH="$work/bench.vault" VAULT_KEY_FILE="$work/bench.key" XDG_RUNTIME_DIR="$work/runtime" XDG_STATE_HOME="$work/state" \
    DBUS_SESSION_BUS_ADDRESS="$vault_bus" "$VAULT_BIN" secret-service &
vault_pid=$!
pids+=("$vault_pid")
DBUS_SESSION_BUS_ADDRESS="$vault_bus" gdbus wait --session --timeout 60 org.freedesktop.secrets

# gnome-keyring-daemon on its bus, its login keyring made and unlocked from stdin.
start_bus
gk_bus=$bus_address
gk_env=(env DBUS_SESSION_BUS_ADDRESS="$gk_bus" XDG_DATA_HOME="$work/gk-data" XDG_RUNTIME_DIR="$work/gk-runtime" HOME="$work")
printf 'benchmark' | "${gk_env[@]}" gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
"${gk_env[@]}" gdbus wait --session --timeout 60 org.freedesktop.secrets
gk_pid=$("${gk_env[@]}" gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | sed -E 's/.*uint32 ([0-9]+).*/\1/')
pids+=("$gk_pid")

for bus in "$vault_bus" "$gk_bus"; do
    printf 'bench-secret' | DBUS_SESSION_BUS_ADDRESS="$bus" secret-tool store --label=bench service bench.example.com username alice
    [[ "$(DBUS_SESSION_BUS_ADDRESS="$bus" secret-tool lookup service bench.example.com username alice)" == bench-secret ]]
done

python3 - "$ROUNDS" "$vault_bus" "$gk_bus" "$vault_pid" "$gk_pid" <<'PY'
import os, random, statistics, subprocess, sys, time
rounds, buses, pids = int(sys.argv[1]), {"vault secret-service": sys.argv[2], "gnome-keyring-daemon": sys.argv[3]}, {"vault secret-service": sys.argv[4], "gnome-keyring-daemon": sys.argv[5]}
command = ["secret-tool", "lookup", "service", "bench.example.com", "username", "alice"]
def lookup(bus):
    start = time.perf_counter()
    out = subprocess.run(command, env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus}, capture_output=True, check=True).stdout
    assert out.strip() == b"bench-secret"
    return time.perf_counter() - start
for name in buses: lookup(buses[name])  # warm-up
times = {name: [] for name in buses}
ratios = []
for _ in range(rounds):
    order = list(buses); random.shuffle(order)
    this = {name: lookup(buses[name]) for name in order}
    for name in buses: times[name].append(this[name])
    ratios.append(this["vault secret-service"] / this["gnome-keyring-daemon"])
def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return line.split(":")[1].strip()
load = open("/proc/loadavg").read().split()[:3]
print(f"secret-tool lookup, {rounds} interleaved rounds (load average {' '.join(load)}):")
for name in buses:
    ms = sorted(t * 1000 for t in times[name])
    print(f"  {name:22} median {statistics.median(ms):7.2f} ms   p90 {ms[int(len(ms) * 0.9)]:7.2f} ms   idle VmRSS {rss(pids[name])}")
print(f"  ratio vault/gnome-keyring per round: median {statistics.median(ratios):.2f}")
PY
