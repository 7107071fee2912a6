#!/usr/bin/env bash
# Instructions per seal/open, VaultKit vs raw libsodium, counted by callgrind: repeatable
# where wall-clock ratios on a shared 2-core machine are not. Usage: ./callgrind-seal.sh [N]
set -euo pipefail
cd "$(dirname "$0")"
N="${1:-2000}"
# PROBE=path/to/SealingProbe compares another build (e.g. before a change).
probe="${PROBE:-}"
if [ -z "$probe" ]; then
    swift build -c release --product SealingProbe >/dev/null
    probe=".build/release/SealingProbe"
fi
count() {  # mode size n -> total instructions
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$probe" "$1" "$2" "$3" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '| size | seal VaultKit | seal raw | seal ratio | open VaultKit | open raw | open ratio |\n|---|---|---|---|---|---|---|\n'
for size in 32 256 1024 65536 1048576; do
    n=$N; [ "$size" -ge 65536 ] && n=$(( N / 20 > 10 ? N / 20 : 10 ))
    declare -A per
    for mode in seal-vaultkit seal-raw open-vaultkit open-raw; do
        base=$(count "$mode" "$size" 0); total=$(count "$mode" "$size" "$n")
        per[$mode]=$(( (total - base) / n ))
    done
    awk -v s="$size" -v sv="${per[seal-vaultkit]}" -v sr="${per[seal-raw]}" -v ov="${per[open-vaultkit]}" -v orw="${per[open-raw]}" \
        'BEGIN { printf "| %d | %d | %d | %.3fx | %d | %d | %.3fx |\n", s, sv, sr, sv/sr, ov, orw, ov/orw }'
done
