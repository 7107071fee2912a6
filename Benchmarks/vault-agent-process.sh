#!/usr/bin/env bash
# Issue 15: `vault get` / `vault set` as processes with the agent holding the vault,
# interleaved in one run with two C floor programs (Floor/vault-floor.c, the least a
# `get` process does; Floor/vault-write-floor.c, the least a durable `set` process does,
# on a copy of the agent's vault), `vault get` with a key file and with a passphrase
# without the agent, and `pass show` / `pass insert` (installed here if missing, as
# peers.sh does). Then the agent's resident memory with the ITEMS-item vault unlocked,
# and its cost per request with 1 and 8 concurrent clients (raw protocol from Python,
# no process start-up). The load average is printed before and after the rounds.
# Usage: ./vault-agent-process.sh [ITEMS] [RUNS]      defaults: 100000 items, 25 rounds
set -euo pipefail
cd "$(dirname "$0")"
ITEMS="${1:-100000}"; RUNS="${2:-25}"
if ! command -v pass >/dev/null || ! command -v gpg >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pass gnupg >/dev/null
fi
VAULT_BIN="$(./build-vault.sh)"
work="$(mktemp -d "${TMPDIR:-/tmp}/vault-agent.XXXXXX")"
trap '"$VAULT_BIN" agent stop >/dev/null 2>&1 || true; gpgconf --homedir "$work/gnupg" --kill all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cc -O2 -o "$work/vault-floor" Floor/vault-floor.c $(pkg-config --cflags --libs libsodium sqlite3)
cc -O2 -o "$work/vault-write-floor" Floor/vault-write-floor.c $(pkg-config --cflags --libs libsodium sqlite3)

export VAULT_AGENT_SOCKET="$work/agent.sock" VAULT_PATH="$work/agent.vault" VAULT_PASSPHRASE='correct horse battery staple'
"$VAULT_BIN" init --kdf interactive
"$VAULT_BIN" unlock --idle-timeout 0
"$VAULT_BIN" init --vault "$work/key.vault" --key-file "$work/vault.key"

# pass, as peers.sh sets it up: a throwaway gpg key without a passphrase.
if command -v pass >/dev/null && command -v gpg >/dev/null; then
    export GNUPGHOME="$work/gnupg" PASSWORD_STORE_DIR="$work/password-store"
    mkdir -m 700 "$GNUPGHOME"
    gpg --batch --quiet --passphrase '' --quick-gen-key 'vault bench <bench@example.invalid>' default default never 2>/dev/null
    pass init "$(gpg --list-keys --with-colons | awk -F: '/^fpr/ { print $10; exit }')" >/dev/null
fi

python3 - "$VAULT_BIN" "$RUNS" "$ITEMS" "$work" <<'PY'
import os, shutil, sqlite3, statistics, subprocess, sys, threading, time
sys.path.insert(0, os.getcwd())
from agent_client import Agent
vault, runs, items, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
socket_path, vault_path = os.environ["VAULT_AGENT_SOCKET"], os.environ["VAULT_PATH"]

# Fill both vaults through the agent's protocol (one connection, one durable write each).
start = time.perf_counter()
agent = Agent(socket_path, vault_path)
for i in range(items):
    agent.set(f"svc{i % 100}.example.com", f"user{i}", b"s3cr3t-%d" % i)
print(f"filled {items} items through the agent in {time.perf_counter() - start:.0f} s", file=sys.stderr)
# The write floor changes rows without the vault's keys: it gets a copy, never the agent's file.
floor_copy = f"{work}/write-floor.vault"
with sqlite3.connect(f"file:{vault_path}?mode=ro", uri=True) as source, sqlite3.connect(floor_copy) as copy:
    source.backup(copy)
key_env = dict(os.environ, VAULT_KEY_FILE=f"{work}/vault.key", VAULT_PATH=f"{work}/key.vault")
for i in range(100):
    subprocess.run([vault, "set", f"svc{i % 100}.example.com", f"user{i}"], input=b"s3cr3t\n", env=key_env, check=True)
has_pass = shutil.which("pass") is not None and "PASSWORD_STORE_DIR" in os.environ
if has_pass:
    for i in range(100):
        subprocess.run(["pass", "insert", "-m", "-f", f"svc{i % 100}.example.com/user{i}"], input=b"s3cr3t\n", stdout=subprocess.DEVNULL, check=True)

agent_env = {k: v for k, v in os.environ.items() if k != "VAULT_PASSPHRASE"}
no_agent_env = dict(os.environ, VAULT_AGENT_SOCKET=f"{work}/none.sock")

def timed(command, env, stdin=b""):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1e3
    assert result.returncode == 0, (command, result.stderr)
    return elapsed

rows = {name: [] for name in ["C floor", "C write floor", "vault get, agent", "vault set, agent", "vault get, key file, no agent",
                              "vault get, passphrase (interactive), no agent", "pass show", "pass insert"]}
print(f"load average before the rounds: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
for round in range(runs):
    i = round % 100
    rows["C floor"].append(timed([f"{work}/vault-floor", vault_path], os.environ))
    rows["C write floor"].append(timed([f"{work}/vault-write-floor", floor_copy], os.environ))
    rows["vault get, agent"].append(timed([vault, "get", f"svc{i}.example.com", f"user{i}"], agent_env))
    rows["vault set, agent"].append(timed([vault, "set", f"svc{i}.example.com", f"user{i}"], agent_env, b"n3w\n"))
    rows["vault get, key file, no agent"].append(timed([vault, "get", f"svc{i}.example.com", f"user{i}"], key_env))
    rows["vault get, passphrase (interactive), no agent"].append(timed([vault, "get", f"svc{i}.example.com", f"user{i}"], no_agent_env))
    if has_pass:
        rows["pass show"].append(timed(["pass", "show", f"svc{i}.example.com/user{i}"], os.environ))
        rows["pass insert"].append(timed(["pass", "insert", "-m", "-f", f"svc{i}.example.com/user{i}"], os.environ, b"n3w\n"))

print(f"load average after the rounds: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
floor, write_floor = statistics.median(rows["C floor"]), statistics.median(rows["C write floor"])
peer = {"vault get, agent": "pass show", "vault set, agent": "pass insert"}
writes = {"C write floor", "vault set, agent", "pass insert"}
print(f"| command ({items} items in the agent's vault, {runs} interleaved rounds) | p50 | x C floor | x C write floor | x pass |")
print("|---|---|---|---|---|")
for name, samples in rows.items():
    if not samples:
        print(f"| {name} | not installed | | | |")
        continue
    p50 = statistics.median(samples)
    versus = statistics.median(rows[peer[name]]) if name in peer and rows[peer[name]] else None
    print(f"| {name} | {p50:.2f} ms | {p50 / floor:.2f}x | {f'{p50 / write_floor:.2f}x' if name in writes else ''} | {f'{p50 / versus:.2f}x' if versus else ''} |")

pid = next(line.split("pid ")[1].split(",")[0] for line in subprocess.run([vault, "agent", "status"], capture_output=True, text=True).stdout.splitlines() if "pid " in line)
status = open(f"/proc/{pid}/status").read()
field = lambda name: next(line.split()[1] for line in status.splitlines() if line.startswith(name + ":"))
print(f"| agent resident memory, {items}-item vault unlocked | {int(field('VmRSS')) / 1024:.1f} MiB (peak {int(field('VmHWM')) / 1024:.1f} MiB) | | | |")

def per_request(clients, requests_each=2000):
    connections = [Agent(socket_path, vault_path) for _ in range(clients)]
    def work_on(connection, offset):
        for r in range(requests_each):
            n = (offset + r) % items
            connection.secret(f"svc{n % 100}.example.com", f"user{n}")
    threads = [threading.Thread(target=work_on, args=(c, k * 7919)) for k, c in enumerate(connections)]
    start = time.perf_counter()
    for t in threads: t.start()
    for t in threads: t.join()
    return (time.perf_counter() - start) * 1e6 / (clients * requests_each)

print(f"| agent, secret requests, 1 client | {per_request(1):.0f} us per request | | | |")
print(f"| agent, secret requests, 8 concurrent clients | {per_request(8):.0f} us per request (wall time / requests) | | | |")
PY
