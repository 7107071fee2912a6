#!/usr/bin/env python3
"""A/B of two `vault` binaries as processes: `get`, `set` and `list` on a 200-item key-file
vault of each binary's own, the two alternated every round (A B, then B A, ...), so load
from elsewhere hits both alike. Prints a markdown row per command: median A, median B, B/A.
Usage: ./cli-ab.py VAULT_A VAULT_B [ROUNDS]   (release builds: scripts/build-vault.sh with
--scratch-path, one per tree). Run with the same binary twice for the noise floor."""
import os, statistics, subprocess, sys, time, tempfile
before, after = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 200
work = tempfile.mkdtemp()  # removed at the end
key = os.path.join(work, "key")
env = dict(os.environ)
def run(binary, args, vault, stdin=None):
    e = dict(env, VAULT_PATH=vault, VAULT_KEY_FILE=key)
    t = time.perf_counter()
    p = subprocess.run([binary] + args, input=stdin, env=e, capture_output=True)
    assert p.returncode == 0, p.stderr
    return (time.perf_counter() - t) * 1e3
vaults = {}
for name, binary in (("before", before), ("after", after)):
    v = os.path.join(work, name + ".vault")
    e = dict(env, VAULT_PATH=v, VAULT_KEY_FILE=key)
    if not os.path.exists(v):
        subprocess.run([binary, "init"], env=e, capture_output=True, check=True)
    for i in range(200):
        subprocess.run([binary, "set", f"svc{i}", "user"], input=b"secret-%d" % i, env=e, check=True, capture_output=True)
    vaults[name] = v
times = {(n, op): [] for n in ("before", "after") for op in ("get", "set", "list")}
for r in range(rounds):
    order = (("before", before), ("after", after)) if r % 2 == 0 else (("after", after), ("before", before))
    for name, binary in order:
        times[(name, "get")].append(run(binary, ["get", f"svc{r % 200}", "user"], vaults[name]))
        times[(name, "set")].append(run(binary, ["set", f"svc{r % 200}", "user"], vaults[name], stdin=b"new-secret"))
        times[(name, "list")].append(run(binary, ["list"], vaults[name]))
for op in ("get", "set", "list"):
    b = statistics.median(times[("before", op)]); a = statistics.median(times[("after", op)])
    print(f"| vault {op} (200 items, key file) | {b:.2f} ms | {a:.2f} ms | {a/b:.3f} |")
subprocess.run(["rm", "-rf", work], check=True)
