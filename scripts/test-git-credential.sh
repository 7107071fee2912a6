#!/usr/bin/env bash
# Runs git's own credential-helper test, t/t0303-credential-external.sh, against
# git-credential-vault and the git installed on this machine (GIT_TEST_INSTALLED).
#
# The test comes from the source package of the installed git, fetched from Debian
# with apt through a private sources list (the machine's apt configuration is not
# changed) into .build-git/ (gitignored). Only git's test-tool is built, since
# test-lib.sh needs it; everything else is the installed git. Idempotent: a second
# run reuses the source and the build. Exits non-zero if any t0303 test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/.build-git

if [[ "$(uname)" != "Linux" ]] || ! command -v dpkg-query >/dev/null 2>&1; then
    echo "test-git-credential: needs Debian or Ubuntu (git's source comes from apt)" >&2
    exit 1
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

# What building test-tool and unpacking a source package need.
missing=()
command -v git >/dev/null 2>&1 || missing+=(git)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v dpkg-source >/dev/null 2>&1 || missing+=(dpkg-dev)
dpkg-query -W -f='${Status}' zlib1g-dev 2>/dev/null | grep -q "install ok installed" || missing+=(zlib1g-dev)
if ((${#missing[@]})); then
    echo "test-git-credential: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

version=$(dpkg-query -W -f='${Version}' git)
upstream=${version#*:}
upstream=${upstream%%-*}
source_dir=$cache/git-$upstream

if [[ ! -f "$source_dir/t/t0303-credential-external.sh" ]]; then
    echo "test-git-credential: fetching the source of git $version from Debian" >&2
    apt_dir=$cache/apt
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/download" "$apt_dir/parts"
    # deb-src lines for every suite the machine's own sources name, in a private list.
    : > "$apt_dir/sources.list"
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f "$file" ]] || continue
        sed -nE 's/^deb(\s+\[[^]]*\])?\s+/deb-src\1 /p' "$file" >> "$apt_dir/sources.list"
    done
    for file in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$file" ]] || continue
        sed -E 's/^Types:.*/Types: deb-src/' "$file" > "$apt_dir/parts/$(basename "$file")"
    done
    apt_options=(
        -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
        -o "Dir::Etc::sourceparts=$apt_dir/parts"
        -o "Dir::State::Lists=$apt_dir/lists"
        -o "Dir::Cache::archives=$apt_dir/archives"
        -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
        -o "APT::Sandbox::User=root"
    )
    apt-get "${apt_options[@]}" update -qq
    # The installed version's source; if the archive has moved on, the current one (its
    # t0303 tests the same protocol).
    if ! (cd "$apt_dir/download" && apt-get "${apt_options[@]}" source --download-only -qq "git=$version"); then
        echo "test-git-credential: git $version's source is gone from the archive; using the current one" >&2
        (cd "$apt_dir/download" && apt-get "${apt_options[@]}" source --download-only -qq git)
    fi
    rm -rf "$source_dir.partial"
    dsc=$(ls -t "$apt_dir"/download/git_*.dsc | head -1)
    (cd "$apt_dir/download" && dpkg-source --no-check -x "$dsc" "$source_dir.partial" >/dev/null)
    mv "$source_dir.partial" "$source_dir"
fi

# test-lib.sh needs git's test-tool, its build options and its test templates; the
# git under test is the installed one. No curl, expat, gettext, Perl or Tcl/Tk needed.
make_options=(NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_PERL=1 NO_PYTHON=1 NO_TCLTK=1 NO_OPENSSL=1)
if [[ ! -x "$source_dir/t/helper/test-tool" || ! -f "$source_dir/GIT-BUILD-OPTIONS" || ! -d "$source_dir/templates/blt" ]]; then
    echo "test-git-credential: building git's test-tool (once)" >&2
    make -C "$source_dir" -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" "${make_options[@]}" \
        t/helper/test-tool GIT-BUILD-OPTIONS >"$cache/make.log" 2>&1 \
        && make -C "$source_dir/templates" >>"$cache/make.log" 2>&1 \
        || { tail -30 "$cache/make.log" >&2; exit 1; }
fi

# The helper under test, and the vault it uses: a fresh vault unlocked by a key file, so
# no passphrase prompt and no KDF cost per git call.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for product in vault git-credential-vault; do
    swift build --product "$product" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
done
bin=$(swift build --show-bin-path)
export VAULT_PATH="$work/git.vault" VAULT_KEY_FILE="$work/git.key"
"$bin/vault" init >/dev/null

# t0303 runs `git credential` with credential.helper=vault, so git finds
# git-credential-vault on PATH; the installed git is the one tested.
echo "test-git-credential: t0303-credential-external.sh with credential.helper=vault" >&2
(
    cd "$source_dir/t"
    PATH="$bin:$PATH" \
    GIT_TEST_INSTALLED="$(dirname "$(command -v git)")" \
    GIT_TEST_CREDENTIAL_HELPER=vault \
    TEST_OUTPUT_DIRECTORY="$work" \
    sh ./t0303-credential-external.sh -v
) >"$work/t0303.log" 2>&1 && status=0 || status=$?
grep -E "^(ok|not ok|# )" "$work/t0303.log" >&2 || true
if [[ $status -ne 0 ]] || grep -q "^not ok" "$work/t0303.log" || ! grep -q "^# passed all" "$work/t0303.log"; then
    echo "test-git-credential: t0303 FAILED (status $status); its log:" >&2
    cat "$work/t0303.log" >&2
    exit 1
fi
echo "test-git-credential: t0303 passed" >&2
