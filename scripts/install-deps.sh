#!/usr/bin/env bash
# Installs what VaultKit needs and the machine lacks; does nothing when all is there.
# Debian/Ubuntu: libsodium-dev, libsqlite3-dev, pkg-config (apt-get, as root or via sudo).
# macOS: libsodium through Homebrew (SQLite ships with the OS).
# Test extras: PyNaCl for the independent format reader (skipped, with a note, if pip can't).
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    echo "install-deps: no 'swift' on PATH; install a Swift 6 toolchain from swift.org first" >&2
    exit 1
fi

# apt-get install of the packages named, as root or via sudo; nothing when none are named.
apt_install() {
    (($#)) || return 0
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    echo "install-deps: installing $*" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if [[ "$(uname)" == "Darwin" ]]; then
    pkg-config --exists libsodium 2>/dev/null || brew install libsodium pkg-config
else
    missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    pkg-config --exists libsodium 2>/dev/null || missing+=(libsodium-dev)
    pkg-config --exists sqlite3 2>/dev/null || missing+=(libsqlite3-dev)
    apt_install ${missing[@]+"${missing[@]}"}
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c "import nacl.pwhash" >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check pynacl >/dev/null 2>&1 \
        || echo "install-deps: could not install PyNaCl; the independent-reader format tests will be skipped" >&2
fi

# Test extra: django-oauth-toolkit, the real OAuth 2.0 authorization server the VaultAuth tests
# start themselves (Tests/OAuthServer). Required, not skipped: without it those tests fail.
if [[ "${1:-}" == "--test" ]] && ! python3 -c "from importlib.metadata import version; assert version('django-oauth-toolkit') == '3.4.1'" >/dev/null 2>&1; then
    echo "install-deps: installing django-oauth-toolkit for the VaultAuth tests" >&2
    python3 -m pip install --quiet --disable-pip-version-check "django-oauth-toolkit==3.4.1" "django>=5.1,<6"
fi

# The Python keyring backend's tests run in a virtualenv (scripts/test-python-keyring.sh);
# Debian and Ubuntu ship venv's pip bootstrap separately.
if [[ "${1:-}" == "--test" && "$(uname)" != "Darwin" ]] && ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    apt_install python3-venv
fi

# `vault secret-service` loads libsystemd (sd-bus) and libcrypto (OpenSSL) at run time; its
# tests (scripts/test-secret-service.sh) start a private dbus-daemon and use libsecret's
# secret-tool and gdbus (libglib2.0-bin).
if [[ "$(uname)" != "Darwin" ]]; then
    missing=()
    compgen -G "/usr/lib/*/libsystemd.so.0" >/dev/null || compgen -G "/lib/*/libsystemd.so.0" >/dev/null || missing+=(libsystemd0)
    compgen -G "/usr/lib/*/libcrypto.so.3" >/dev/null || compgen -G "/lib/*/libcrypto.so.3" >/dev/null || missing+=(libssl3)
    if [[ "${1:-}" == "--test" ]]; then
        command -v dbus-daemon >/dev/null 2>&1 || missing+=(dbus-daemon)
        command -v secret-tool >/dev/null 2>&1 || missing+=(libsecret-tools)
        command -v gdbus >/dev/null 2>&1 || missing+=(libglib2.0-bin)
    fi
    apt_install ${missing[@]+"${missing[@]}"}
fi

# The PostgreSQL engine (VaultKitPostgres) builds against libpq; its tests start a
# throwaway server from Debian's postgresql package (scripts/postgres-test-cluster.sh),
# with TLS certificates from openssl.
# Benchmarks/run-quick.sh (called by scripts/test.sh) reports instruction-count ratios
# under valgrind's callgrind (Benchmarks/check-ratios.sh).
if [[ "$(uname)" != "Darwin" ]]; then
    missing=()
    pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
    if [[ "${1:-}" == "--test" ]] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
        missing+=(postgresql)
    fi
    # The throwaway server's TLS certificates (a test CA) are made with openssl.
    if [[ "${1:-}" == "--test" ]] && ! command -v openssl >/dev/null 2>&1; then
        missing+=(openssl)
    fi
    if [[ "${1:-}" == "--test" ]] && ! command -v callgrind_annotate >/dev/null 2>&1; then
        missing+=(valgrind)
    fi
    apt_install ${missing[@]+"${missing[@]}"}
fi
