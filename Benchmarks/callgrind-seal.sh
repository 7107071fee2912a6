#!/usr/bin/env bash
# Instructions per seal/open, VaultKit vs raw libsodium, counted by callgrind: repeatable
# where wall-clock ratios on a shared 2-core machine are not.
# Usage: ./callgrind-seal.sh [N]      (SIZES="32 65536" for fewer sizes)
# Prints a markdown table and writes results/callgrind-seal.csv, or $CSV (check-ratios.sh, plot.py).
#
# Two baselines per size: raw libsodium over the SIZE-byte secret alone, and over as many
# bytes as VaultKit's record (the secret plus 62 bytes of attributes here), which
# separates the record format's cost from VaultKit's code. "w/o mem*" leaves out the
# instructions spent in memset/memcpy/memmove on both sides: valgrind counts every
# iteration of `rep stosb`/`rep movsb` as one instruction, which at 64 KiB and above makes
# zeroing a plaintext (which a secret must get) look as costly as encrypting it, while
# the CPU does it at tens of bytes per cycle (see the wall-time ratios in README.md).
set -euo pipefail
cd "$(dirname "$0")"
N="${1:-2000}"
SIZES="${SIZES:-32 256 1024 65536 1048576}"
# PROBE=path/to/SealingProbe compares another build (e.g. before a change).
probe="${PROBE:-}"
if [ -z "$probe" ]; then
    swift build -c release --product SealingProbe >/dev/null
    probe=".build/release/SealingProbe"
fi
tmp="$(mktemp -d "${TMPDIR:-/tmp}/callgrind-seal.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
count() {  # mode size n -> "total memfunctions" instructions
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$probe" "$1" "$2" "$3" >/dev/null 2>&1
    callgrind_annotate --threshold=100 "$tmp/out" 2>/dev/null | awk '
        /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
        /mem(set|cpy|move)/ && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); mem += $1 }
        END { printf "%d %d\n", total, mem }'
}
mkdir -p results
csv="${CSV:-results/callgrind-seal.csv}"
echo "size,operation,vaultkit,raw,raw_record,vaultkit_nomem,raw_record_nomem" > "$csv"
printf '| size | op | VaultKit | raw (secret) | ratio | raw (record size) | ratio | ratio w/o mem* |\n|---|---|---|---|---|---|---|---|\n'
for size in $SIZES; do
    n=$N; [ "$size" -ge 65536 ] && n=$(( N / 20 > 10 ? N / 20 : 10 ))
    for op in seal open; do
        declare -A total mem
        for mode in "$op-vaultkit" "$op-raw" "$op-raw-record"; do
            read -r t0 m0 < <(count "$mode" "$size" 0)
            read -r t1 m1 < <(count "$mode" "$size" "$n")
            if [ "${t1:-0}" -le "${t0:-0}" ]; then echo "callgrind-seal: no count for $mode $size (is valgrind installed?)" >&2; exit 1; fi
            total[$mode]=$(( (t1 - t0) / n )); mem[$mode]=$(( (m1 - m0) / n ))
        done
        vk=${total[$op-vaultkit]}; raw=${total[$op-raw]}; rec=${total[$op-raw-record]}
        vkn=$(( vk - ${mem[$op-vaultkit]} )); recn=$(( rec - ${mem[$op-raw-record]} ))
        echo "$size,$op,$vk,$raw,$rec,$vkn,$recn" >> "$csv"
        awk -v s="$size" -v op="$op" -v vk="$vk" -v raw="$raw" -v rec="$rec" -v vkn="$vkn" -v recn="$recn" \
            'BEGIN { printf "| %d | %s | %d | %d | %.3fx | %d | %.3fx | %.3fx |\n", s, op, vk, raw, vk/raw, rec, vk/rec, vkn/recn }'
        unset total mem
    done
done
