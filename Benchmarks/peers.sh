#!/usr/bin/env bash
# `vault set/get` side by side with the tools a user would otherwise pick, one process per
# operation (as from a shell script), made fair:
#   - every store holds the same ITEMS items before the first timed operation;
#   - each tool with a KDF runs twice: at its documented default, and at one equal cost
#     (Argon2id, 64 MiB, 1 lane, the passes that take ~100 ms here; keepassxc-cli 2.7
#     offers only AES-KDF from the command line, so there: its decryption time set to 100 ms);
#   - one untimed warm-up round, then ROUNDS rounds, each running every operation once in
#     a freshly shuffled order (load drift and page-cache eviction hit every tool alike);
#   - the C floor (Floor/vault-floor.c: start, open the SQLite file, one manifest bucket,
#     one secretbox) is built and timed in the same rounds; ratios are taken per round;
#   - the load average is read before every round and reported with the results.
# Tools: keepassxc-cli (Debian: keepassxc), pass (Debian: pass, gnupg; a throwaway gpg key
# in a temp GNUPGHOME), keyring + keyrings.cryptfile (PyPI). Installs what is missing.
# Results: results/peers.md (table) and results/peers.csv (for plot.py).
# Usage: ./peers.sh [ITEMS] [ROUNDS]        defaults: 100 items, 15 rounds (~3 min after the fill)
set -euo pipefail
cd "$(dirname "$0")"
ITEMS="${1:-100}"; ROUNDS="${2:-15}"

# MARK: Install what is missing (idempotent)
if ! command -v keepassxc-cli >/dev/null || ! command -v pass >/dev/null || ! command -v gpg >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends keepassxc pass gnupg >/dev/null
fi
python3 -c 'import keyring, keyrings.cryptfile, argon2' 2>/dev/null || pip install -q keyring keyrings.cryptfile argon2-cffi

# MARK: Build vault (as README.md says to install it), the fixture tool and the C floor
VAULT_BIN="$(./build-vault.sh)"
swift build -c release --product VaultFixtureTool >/dev/null
TOOL="$(swift build -c release --show-bin-path)/VaultFixtureTool"
work="$(mktemp -d "${TMPDIR:-/tmp}/vault-peers.XXXXXX")"
trap 'gpgconf --homedir "$work/gnupg" --kill all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cc -O2 -o "$work/vault-floor" Floor/vault-floor.c $(pkg-config --cflags --libs libsodium sqlite3)

export PASS='correct horse battery staple' VAULT_PASSPHRASE='correct horse battery staple'
export VAULT_AGENT_SOCKET="$work/no-agent.sock"   # never an agent: every process pays its own unlock

# MARK: The equal cost: Argon2id passes over 64 MiB, 1 lane, closest to 100 ms here
PASSES="$(python3 - <<'PY'
import statistics, time
from argon2.low_level import Type, hash_secret_raw
def ms(t):
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        hash_secret_raw(b"pw", b"s" * 16, time_cost=t, memory_cost=65536, parallelism=1, hash_len=32, type=Type.ID)
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)
print(min(range(1, 9), key=lambda t: abs(ms(t) - 100)))
PY
)"

# MARK: Fill every store with the same ITEMS items (svcN.example.com / userI, a 32-byte secret)
printf '\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a\a' > "$work/vault.key"   # VaultFixtureTool's test key (32 x 0x07)
chmod 600 "$work/vault.key"
"$TOOL" import-raw "$work/key.vault" "$ITEMS"
"$TOOL" create-kdf "$work/default.vault" "$ITEMS" 3 268435456      # vault init's default: moderate
"$TOOL" create-kdf "$work/equal.vault" "$ITEMS" "$PASSES" 67108864
kdf_default="$("$TOOL" open "$work/default.vault" 3)"; kdf_equal="$("$TOOL" open "$work/equal.vault" 5)"

printf '%s\n%s\n' "$PASS" "$PASS" | keepassxc-cli db-create -q -p "$work/default.kdbx" >/dev/null
printf '%s\n%s\n' "$PASS" "$PASS" | keepassxc-cli db-create -q -p -t 100 "$work/equal.kdbx" >/dev/null

export GNUPGHOME="$work/gnupg" PASSWORD_STORE_DIR="$work/password-store"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'vault bench <bench@example.invalid>' default default never 2>/dev/null
pass init "$(gpg --list-keys --with-colons | awk -F: '/^fpr/ { print $10; exit }')" >/dev/null

# keyrings.cryptfile derives a key per entry (Argon2id) and checks the keyring password
# against a reference entry (one more derivation per process). Default: 15 passes,
# 64 MiB, 2 lanes. KR_EQUAL=1: the equal cost, in its own file.
export KEYRING_FILE="$work/cryptfile.cfg" PASSES
cat > "$work/kr.py" <<'PY'
import os, sys
from keyrings.cryptfile.cryptfile import CryptFileKeyring
kr = CryptFileKeyring()
# Setting keyring_key unlocks at once, so the cost and the file come first.
if os.environ.get("KR_EQUAL") == "1":
    kr.time_cost, kr.memory_cost, kr.parallelism = int(os.environ["PASSES"]), 2**16, 1
    kr.file_path = os.environ["KEYRING_FILE"] + ".equal"
else:
    kr.file_path = os.environ["KEYRING_FILE"]
kr.keyring_key = os.environ["PASS"]
if sys.argv[1] == "fill":
    for i in range(int(sys.argv[2])):
        kr.set_password(f"svc{i % 100}.example.com", f"user{i}", "Z" * 32)
elif sys.argv[1] == "set":
    kr.set_password(sys.argv[2], sys.argv[3], sys.stdin.readline().rstrip("\n"))
else:
    print(kr.get_password(sys.argv[2], sys.argv[3]))
PY

python3 - "$VAULT_BIN" "$work" "$ITEMS" "$ROUNDS" "$PASSES" "$kdf_default" "$kdf_equal" <<'PY'
import csv, os, random, statistics, subprocess, sys, time
vault, work, items, rounds, passes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
kdf_default, kdf_equal = float(sys.argv[6]), float(sys.argv[7])
pw, kr, secret = os.environ["PASS"], f"{work}/kr.py", "Z" * 32
eq = dict(os.environ, KR_EQUAL="1")
key_env = dict(os.environ, VAULT_KEY_FILE=f"{work}/vault.key", VAULT_PATH=f"{work}/key.vault")
default_env = dict(os.environ, VAULT_PATH=f"{work}/default.vault")
equal_env = dict(os.environ, VAULT_PATH=f"{work}/equal.vault")

def run(argv, stdin="", env=None, expect=None):
    start = time.perf_counter()
    p = subprocess.run(argv, input=stdin.encode(), capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1e3
    if p.returncode != 0 or (expect is not None and expect.encode() not in p.stdout):
        raise SystemExit(f"{argv[:3]} failed ({p.returncode}): {p.stderr.decode()[:300]} {p.stdout[:80]!r}")
    return elapsed

def name(i): return f"svc{i % 100}.example.com", f"user{i}"

fill_start = time.perf_counter()
for kdbx in ("default", "equal"):
    # One process per entry: its interactive shell reads no commands from a pipe, and
    # importing a KeePass XML file would reset the KDF.
    for i in range(items):
        run(["keepassxc-cli", "add", "-q", "-p", f"{work}/{kdbx}.kdbx", "-".join(name(i))], f"{pw}\n{secret}\n")
for i in range(items):
    s, a = name(i)
    run(["pass", "insert", "-m", "-f", f"{s}/{a}"], secret + "\n")
run(["python3", kr, "fill", str(items)])
run(["python3", kr, "fill", str(items)], env=eq)
print(f"filled every store with {items} items in {time.perf_counter() - fill_start:.0f} s", file=sys.stderr)
run(["keepassxc-cli", "show", "-q", "-s", "-a", "Password", f"{work}/equal.kdbx", "-".join(name(items - 1))], pw + "\n", expect=secret)

# Each operation: (label, make(round) -> argv, stdin, env, expected output or None).
def get(i):  # a random existing item, the same for every tool in a round
    return name(i)
ops = {
    "C floor": lambda i: ([f"{work}/vault-floor", f"{work}/key.vault"], "", None, None),
    "vault get, key file": lambda i: ([vault, "get", *get(i)], "", key_env, secret),
    "vault set, key file": lambda i: ([vault, "set", "new.example.com", f"k{i}"], secret + "\n", key_env, None),
    "vault get, default KDF (moderate)": lambda i: ([vault, "get", *get(i)], "", default_env, secret),
    "vault set, default KDF (moderate)": lambda i: ([vault, "set", "new.example.com", f"d{i}"], secret + "\n", default_env, None),
    "vault get, equal KDF": lambda i: ([vault, "get", *get(i)], "", equal_env, secret),
    "vault set, equal KDF": lambda i: ([vault, "set", "new.example.com", f"e{i}"], secret + "\n", equal_env, None),
    "keepassxc-cli show, default KDF": lambda i: (["keepassxc-cli", "show", "-q", "-s", "-a", "Password", f"{work}/default.kdbx", "-".join(get(i))], pw + "\n", None, secret),
    "keepassxc-cli add, default KDF": lambda i: (["keepassxc-cli", "add", "-q", "-p", f"{work}/default.kdbx", f"new-d{i}"], f"{pw}\n{secret}\n", None, None),
    "keepassxc-cli show, 100 ms KDF": lambda i: (["keepassxc-cli", "show", "-q", "-s", "-a", "Password", f"{work}/equal.kdbx", "-".join(get(i))], pw + "\n", None, secret),
    "keepassxc-cli add, 100 ms KDF": lambda i: (["keepassxc-cli", "add", "-q", "-p", f"{work}/equal.kdbx", f"new-e{i}"], f"{pw}\n{secret}\n", None, None),
    "pass show": lambda i: (["pass", "show", "/".join(get(i))], "", None, secret),
    "pass insert": lambda i: (["pass", "insert", "-m", "-f", f"new.example.com/p{i}"], secret + "\n", None, None),
    "keyring get, default KDF": lambda i: (["python3", kr, "get", *get(i)], "", None, secret),
    "keyring set, default KDF": lambda i: (["python3", kr, "set", "new.example.com", f"d{i}"], secret + "\n", None, None),
    "keyring get, equal KDF": lambda i: (["python3", kr, "get", *get(i)], "", eq, secret),
    "keyring set, equal KDF": lambda i: (["python3", kr, "set", "new.example.com", f"e{i}"], secret + "\n", eq, None),
}
samples = {label: [] for label in ops}
loads = []
rng = random.Random()
for round in range(-1, rounds):               # round -1: the warm-up, not recorded
    loads.append(float(open("/proc/loadavg").read().split()[0]))
    order = list(ops); rng.shuffle(order)
    item = rng.randrange(items)
    for label in order:
        argv, stdin, env, expect = ops[label](item if "get" in label or "show" in label or label == "C floor" else (round + 1) * 1000 + item)
        elapsed = run(argv, stdin, env, expect)
        if round >= 0: samples[label].append(elapsed)
loads.append(float(open("/proc/loadavg").read().split()[0]))

floor = samples["C floor"]
q = lambda xs, f: sorted(xs)[min(len(xs) - 1, int(f * len(xs)))]
header = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {items} items in every store, {rounds} shuffled interleaved rounds "
          f"after one warm-up round; load average (1 min) {min(loads):.2f} to {max(loads):.2f} (median {statistics.median(loads):.2f}). "
          f"Equal KDF: Argon2id {passes} passes, 64 MiB, 1 lane (vault in-process open {kdf_equal:.1f} ms); "
          f"vault's default (moderate: 3 passes, 256 MiB) {kdf_default:.1f} ms.")
lines = [header, "", "| operation | p50 ms | p25-p75 ms | x C floor (median of per-round ratios) |", "|---|---|---|---|"]
with open("results/peers.csv", "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(["operation", "p50_ms", "p25_ms", "p75_ms", "floor_ratio", "load_min", "load_max", "items", "rounds"])
    for label, xs in sorted(samples.items(), key=lambda kv: statistics.median(kv[1])):
        ratio = statistics.median(x / fl for x, fl in zip(xs, floor))
        lines.append(f"| {label} | {statistics.median(xs):.1f} | {q(xs, .25):.1f}-{q(xs, .75):.1f} | {ratio:.1f}x |")
        out.writerow([label, f"{statistics.median(xs):.2f}", f"{q(xs, .25):.2f}", f"{q(xs, .75):.2f}", f"{ratio:.2f}", min(loads), max(loads), items, rounds])
open("results/peers.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
