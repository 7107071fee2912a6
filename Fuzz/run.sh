#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time.
#   Fuzz/run.sh [SECONDS_PER_TARGET]     default 30; CI runs this with the default
#   Fuzz/run.sh --make-seeds             write seed vaults of the current format (seed-vN-*.vault)
# Crashes are written to Fuzz/Artifacts/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-30}
flags=(-c release --scratch-path ../.build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build "${flags[@]}" >"$log" 2>&1 || { cat "$log" >&2; echo "fuzz: build failed" >&2; exit 1; }
bin=$(swift build "${flags[@]}" --show-bin-path)

if [[ "$seconds" == "--make-seeds" ]]; then
    mkdir -p Corpus/FuzzVaultFile
    VAULTKIT_FUZZ_MAKE_SEEDS="$PWD/Corpus/FuzzVaultFile" "$bin/FuzzVaultFile" || true
    exit 0
fi

mkdir -p Artifacts
for target in FuzzRecordDecoder FuzzVaultFile FuzzAgentMessage; do
    work=$(mktemp -d)
    cp -R "Corpus/$target/." "$work/"
    echo "fuzz: $target for ${seconds}s"
    status=0
    "$bin/$target" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="Artifacts/$target-" -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E "^(Done [0-9]+ runs|stat::average_exec_per_sec|stat::peak_rss_mb|==.*ERROR|SUMMARY)" "$log" || tail -20 "$log"
    rm -rf "$work"
    if [[ $status -ne 0 ]]; then echo "fuzz: $target FAILED (exit $status); see Fuzz/Artifacts" >&2; exit 1; fi
done
echo "fuzz: no crash, no hang"
