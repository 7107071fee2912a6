#!/usr/bin/env bash
# Issue 15: what one `vault` process costs to start, for several builds of `vault` side by
# side (say, before and after a change), interleaved round by round with the C floor
# (Floor/vault-floor.c). For each binary: its size and dynamic relocations, then per
# process the wall time, CPU time (user + system) and minor page faults, all from
# wait4(2), for `vault --version`, `vault get` through the agent, and `vault get` with a
# key file and no agent. The agent is started from the first binary; the load average is
# printed before and after the rounds.
# Usage: ./vault-startup.sh ROUNDS VAULT_BINARY...
#   e.g. ./vault-startup.sh 200 /tmp/vault-before "$(./build-vault.sh)"
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS="$1"; shift
[[ $# -ge 1 ]] || { echo "usage: $0 ROUNDS VAULT_BINARY..." >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/vault-startup.XXXXXX")"
trap '"$1" agent stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cc -O2 -o "$work/vault-floor" Floor/vault-floor.c $(pkg-config --cflags --libs libsodium sqlite3)

export VAULT_AGENT_SOCKET="$work/agent.sock" VAULT_PATH="$work/agent.vault" VAULT_PASSPHRASE='correct horse battery staple'
"$1" init --kdf-opslimit 1 --kdf-memlimit 8192
"$1" unlock --idle-timeout 0 >/dev/null
"$1" init --vault "$work/key.vault" --key-file "$work/vault.key"
for i in $(seq 0 99); do
    printf 's3cr3t-%d\n' "$i" | "$1" set "svc$i.example.com" "user$i"
    printf 's3cr3t-%d\n' "$i" | VAULT_KEY_FILE="$work/vault.key" "$1" set --vault "$work/key.vault" "svc$i.example.com" "user$i"
done

python3 - "$ROUNDS" "$work" "$@" <<'PY'
import os, statistics, subprocess, sys, time
rounds, work, binaries = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
agent_env = {k: v for k, v in os.environ.items() if k != "VAULT_PASSPHRASE"}
key_env = dict(agent_env, VAULT_KEY_FILE=f"{work}/vault.key", VAULT_PATH=f"{work}/key.vault", VAULT_AGENT_SOCKET=f"{work}/none.sock")

def relocations(binary):
    out = subprocess.run(["readelf", "-r", "-W", binary], capture_output=True, text=True).stdout
    relative = sum(1 for line in out.splitlines() if "R_X86_64_RELATIVE" in line or "R_AARCH64_RELATIVE" in line)
    symbols = sum(1 for line in out.splitlines() if "R_" in line and "RELATIVE" not in line)
    needed = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout.count("(NEEDED)")
    return relative, symbols, needed

def measured(argv, env):
    """Wall ms, CPU ms and minor page faults of one process, from wait4."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0, (argv, child.stderr.read())
    child.stderr.close()
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_minflt

commands = {"C floor": lambda: ([f"{work}/vault-floor", os.environ["VAULT_PATH"]], os.environ)}
for n, binary in enumerate(binaries):
    commands[f"[{n}] vault --version"] = lambda b=binary: ([b, "--version"], agent_env)
    commands[f"[{n}] vault get, agent"] = lambda b=binary: ([b, "get", "svc7.example.com", "user7"], agent_env)
    commands[f"[{n}] vault get, key file"] = lambda b=binary: ([b, "get", "svc7.example.com", "user7"], key_env)
samples = {name: [] for name in commands}
print(f"load average before the rounds: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
for _ in range(rounds):
    for name, command in commands.items():
        samples[name].append(measured(*command()))
print(f"load average after the rounds: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

for n, binary in enumerate(binaries):
    relative, symbols, needed = relocations(binary)
    print(f"[{n}] {binary}: {os.path.getsize(binary) / 2**20:.1f} MiB, {relative} relative and {symbols} symbol relocations, {needed} shared libraries needed directly")
floor = statistics.median(s[0] for s in samples["C floor"])
print(f"| process ({rounds} interleaved rounds) | wall p50 | x C floor | CPU p50 | minor faults p50 |")
print("|---|---|---|---|---|")
for name, rows in samples.items():
    wall, cpu, faults = (statistics.median(column) for column in zip(*rows))
    print(f"| {name} | {wall:.2f} ms | {wall / floor:.2f}x | {cpu:.2f} ms | {faults:.0f} |")
PY
