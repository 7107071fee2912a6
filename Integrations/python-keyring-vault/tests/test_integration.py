"""How the backend behaves as a part of a real system: which backend keyring picks,
what it does without a way to unlock the vault, and what reaches the ``vault``
processes it starts."""

import os
import subprocess
import sys

import pytest
from keyring import errors

from keyrings.vaultkit import VaultKitKeyring

from conftest import VAULT_VARIABLES, make_vault


def run_python(code, env, *arguments):
    """`python -c code` in a new session, so it has no controlling terminal, with
    standard input closed, as under cron, systemd or CI."""
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        start_new_session=True, timeout=120,
    )


@pytest.fixture
def headless_env(tmp_path):
    """The process environment without D-Bus or keyring configuration, as on a
    headless server: no session bus, no keyringrc, no chosen backend."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND", "DISPLAY", "WAYLAND_DISPLAY")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "runtime")
    return env


def test_keyring_chooses_it_on_headless_linux_without_dbus(headless_env):
    result = run_python("import keyring; print(keyring.get_keyring())", headless_env)
    assert result.returncode == 0, result.stderr
    assert "keyrings.vaultkit.VaultKitKeyring" in result.stdout


def test_the_keyring_command_line_reads_and_writes_through_it(headless_env):
    # The one line README gives to choose the backend explicitly.
    env = {**headless_env, "PYTHON_KEYRING_BACKEND": "keyrings.vaultkit.VaultKitKeyring"}
    stored = subprocess.run([sys.executable, "-m", "keyring", "set", "pypi.example.org", "ci"],
                            input="token-from-keyring-cli\n", env=env, capture_output=True, text=True,
                            start_new_session=True, timeout=120)
    assert stored.returncode == 0, stored.stderr
    assert VaultKitKeyring().get_password("pypi.example.org", "ci") == "token-from-keyring-cli"
    read = run_python("import sys, keyring; print(keyring.get_password(sys.argv[1], sys.argv[2]))", env, "pypi.example.org", "ci")
    assert read.stdout == "token-from-keyring-cli\n", read.stderr
    VaultKitKeyring().delete_password("pypi.example.org", "ci")


def test_without_unlock_material_or_terminal_it_is_not_viable_and_nothing_waits(headless_env):
    env = {name: value for name, value in headless_env.items() if name not in VAULT_VARIABLES[1:]}
    code = (
        "import keyring\n"
        "from keyrings.vaultkit import VaultKitKeyring\n"
        "print(VaultKitKeyring.viable)\n"
        "try:\n"
        "    keyring.get_password('s', 'a')\n"
        "except keyring.errors.NoKeyringError:\n"
        "    print('no keyring')\n"
    )
    result = run_python(code, env)
    assert result.stdout == "False\nno keyring\n", result.stderr


def test_without_a_vault_file_it_is_not_viable(headless_env, tmp_path):
    env = {**headless_env, "VAULT_PATH": str(tmp_path / "missing.vault")}
    result = run_python("from keyrings.vaultkit import VaultKitKeyring as K; print(K.viable)", env)
    assert result.stdout == "False\n", result.stderr


def test_passwords_reach_vault_only_through_pipes(vault_cli, tmp_path, monkeypatch):
    """A wrapper in place of `vault` records each child's argv and environment."""
    env = make_vault(vault_cli, str(tmp_path))
    log = tmp_path / "children.log"
    wrapper = tmp_path / "vault-wrapper"
    wrapper.write_text(f'#!/bin/sh\n{{ printf "%s\\n" "$@"; env; }} >> "{log}"\nexec "{vault_cli}" "$@"\n')
    wrapper.chmod(0o700)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    backend = VaultKitKeyring().with_properties(executable=str(wrapper))
    backend.set_password("svc", "alice", "pipe-only-password")
    assert backend.get_password("svc", "alice") == "pipe-only-password"
    assert backend.get_credential("svc", None).password == "pipe-only-password"
    backend.delete_password("svc", "alice")
    recorded = log.read_text()
    assert "alice" in recorded, "the wrapper was not used"
    assert "pipe-only-password" not in recorded


def test_it_reads_secrets_the_vault_command_stored(vault_cli, tmp_path, monkeypatch):
    env = make_vault(vault_cli, str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # `vault set` strips one newline: this secret ends in one.
    subprocess.run([vault_cli, "set", "db", "bob"], input=b"line one\nline two\n\n", check=True)
    subprocess.run([vault_cli, "set", "db", "alice"], input=b"alice-secret\n", check=True)
    backend = VaultKitKeyring()
    assert backend.get_password("db", "bob") == "line one\nline two\n"
    # Without a username: the first account as `vault list` sorts them.
    credential = backend.get_credential("db", None)
    assert (credential.username, credential.password) == ("alice", "alice-secret")


def test_a_secret_that_is_not_text_is_a_keyring_error(vault_cli, tmp_path, monkeypatch):
    env = make_vault(vault_cli, str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    subprocess.run([vault_cli, "set", "bin", "key"], input=b"\xff\xfe\x00binary", check=True)
    with pytest.raises(errors.KeyringError, match="not UTF-8"):
        VaultKitKeyring().get_password("bin", "key")


def test_vault_errors_surface_as_keyring_errors_without_the_secret(vault_cli, tmp_path, monkeypatch):
    env = make_vault(vault_cli, str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    wrong_key = tmp_path / "wrong.key"
    wrong_key.write_bytes(os.urandom(32))
    wrong_key.chmod(0o600)  # vault refuses key files others can read
    monkeypatch.setenv("VAULT_KEY_FILE", str(wrong_key))
    with pytest.raises(errors.PasswordSetError, match="wrong passphrase or key") as raised:
        VaultKitKeyring().set_password("svc", "alice", "never-in-an-error")
    assert "never-in-an-error" not in str(raised.value)
