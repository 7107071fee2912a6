#!/usr/bin/env bash
# Target 6: one `vault get` process on a 100,000-item vault with the interactive KDF.
# Compares its wall time with the in-process open (which is the KDF) and its peak RSS
# with the KDF's 64 MiB. Usage: ./vault-get-process.sh [ITEMS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")"
ITEMS="${1:-100000}"; RUNS="${2:-15}"
(cd .. && swift build -c release --product vault >/dev/null)
swift build -c release --product VaultFixtureTool >/dev/null
VAULT_BIN="$(cd .. && swift build -c release --show-bin-path)/vault"
TOOL="$(swift build -c release --show-bin-path)/VaultFixtureTool"
work="$(mktemp -d "${TMPDIR:-/tmp}/vault-get.XXXXXX")"; trap 'rm -rf "$work"' EXIT
export VAULT_PASSPHRASE='correct horse battery staple' VAULT_PATH="$work/get.vault"
"$TOOL" create "$VAULT_PATH" "$ITEMS"
# The baseline (an in-process Vault.open: the KDF plus opening SQLite, timed inside a
# helper process) alternates with the measured processes, so load from other processes
# on this shared machine hits both alike.
python3 - "$VAULT_BIN" "$RUNS" "$TOOL" "$ITEMS" <<'PY'
import os, statistics, subprocess, sys, time
vault, runs, tool, items = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
walls, rss, kdfs = [], [], []
for i in range(runs):
    kdfs.append(float(subprocess.run([tool, "open", os.environ["VAULT_PATH"], "1"], capture_output=True, check=True, text=True).stdout))
    start = time.perf_counter()
    p = subprocess.Popen([vault, "get", f"svc{i % 100}.example.com", f"user{i}"], stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    walls.append((time.perf_counter() - start) * 1e3)
    rss.append(usage.ru_maxrss / 1024)  # KiB -> MiB
    assert status == 0 and len(out) > 0, f"vault get failed: {status}"
wall, peak, kdf_ms = statistics.median(walls), max(rss), statistics.median(kdfs)
kdf_mib = 64
print(f"| vault get process @{items // 1000}k, interactive KDF | {wall:.1f} ms (median of {runs}) | in-process open (KDF) {kdf_ms:.1f} ms (median, interleaved) | overhead {wall - kdf_ms:.1f} ms (target <= 30) |")
print(f"| vault get peak RSS | {peak:.1f} MiB (max of {runs}) | KDF memory {kdf_mib} MiB | overhead {peak - kdf_mib:.1f} MiB (target <= 32) |")
PY
