"""The tests need a real ``vault`` command: VAULT_CLI names the built binary
(scripts/test-python-keyring.sh sets it). The session gets one vault unlocked by a
key file, named by the environment variables the backend and ``vault`` read, so
keyring's own fixtures (which construct the backend before any fixture of ours)
already see it."""

import os
import subprocess

import pytest

#: The variables that would point ``vault`` elsewhere; the tests set their own.
VAULT_VARIABLES = ("VAULT_PATH", "VAULT_KEY_FILE", "VAULT_PASSPHRASE", "VAULT_PASSPHRASE_FILE", "XDG_DATA_HOME")


@pytest.fixture(scope="session")
def vault_cli():
    path = os.environ.get("VAULT_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("set VAULT_CLI to the built vault executable (scripts/test-python-keyring.sh does)")
    return path


def make_vault(vault_cli, directory):
    """A new key-file vault in `directory`, and the environment that names it."""
    env = {
        "VAULT_PATH": os.path.join(directory, "keyring.vault"),
        "VAULT_KEY_FILE": os.path.join(directory, "keyring.key"),
        "KEYRING_PROPERTY_EXECUTABLE": vault_cli,
    }
    clean = {name: value for name, value in os.environ.items() if name not in VAULT_VARIABLES}
    subprocess.run([vault_cli, "init"], check=True, stdin=subprocess.DEVNULL, env={**clean, **env})
    return env


@pytest.fixture(scope="session", autouse=True)
def session_vault(vault_cli, tmp_path_factory):
    env = make_vault(vault_cli, str(tmp_path_factory.mktemp("vault")))
    saved = {name: os.environ.get(name) for name in (*VAULT_VARIABLES, *env)}
    for name in VAULT_VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(env)
    yield env
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
