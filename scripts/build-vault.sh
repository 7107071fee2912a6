#!/usr/bin/env bash
# Builds `vault` for installing: a release build with the Swift runtime linked statically
# (`--static-swift-stdlib`) and, on Linux, the C++ runtime too, then prints the binary's
# path. Each command is a new process, so what the dynamic loader does at start counts:
# the shared libstdc++ alone costs about a millisecond per command (Benchmarks/README.md,
# "Static libstdc++").
#
# The static Swift runtime's link arguments name `-lstdc++`, which the linker resolves to
# the first libstdc++ it finds on its search path. A directory holding only the toolchain's
# `libstdc++.a`, searched first, makes that the static archive. Where there is none (macOS
# has no libstdc++; a Linux without the static archive), the build links the shared one.
#
# Usage: scripts/build-vault.sh [extra `swift build` arguments]
#        install -m 755 "$(scripts/build-vault.sh)" ~/.local/bin/vault
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --product vault --static-swift-stdlib "$@")
if [[ "$(uname -s)" == Linux ]]; then
    archive="$(clang -print-file-name=libstdc++.a 2>/dev/null || true)"
    if [[ "$archive" == /* && -f "$archive" ]]; then
        # Under .build (ignored by git), rebuilt each time so a new toolchain is picked up.
        search="$PWD/.build/static-libstdc++"
        mkdir -p "$search"
        ln -sfn "$archive" "$search/libstdc++.a"
        flags+=(-Xlinker "-L$search")
    else
        echo "build-vault.sh: no static libstdc++.a; linking the shared libstdc++" >&2
    fi
fi
swift build "${flags[@]}" >&2
echo "$(swift build "${flags[@]}" --show-bin-path)/vault"
