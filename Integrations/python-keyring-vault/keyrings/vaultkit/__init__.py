"""A keyring backend that keeps passwords in a VaultKit vault.

Every call runs the ``vault`` command. Passwords travel only through pipes: written
to its standard input (``vault set``) and read from its standard output
(``vault get``). Service and account names go on its command line, as they do for
``vault`` itself; they are names, not secrets.

Which vault, and what unlocks it, come from the environment the ``vault`` command
already reads, passed on unchanged: ``VAULT_PATH``, ``VAULT_KEY_FILE``,
``VAULT_PASSPHRASE_FILE`` (and ``VAULT_PASSPHRASE``). Without any of them the
command prompts on the controlling terminal, and without a terminal it fails at
once, so a call never waits for input that cannot come.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from keyring import backend, credentials, errors
from keyring.compat import properties

__all__ = ["VaultKitKeyring"]

#: ``vault`` exits with this status when the item does not exist.
ITEM_NOT_FOUND = 44

#: The environment variables that unlock a vault without a prompt.
UNLOCK_VARIABLES = ("VAULT_KEY_FILE", "VAULT_PASSPHRASE_FILE", "VAULT_PASSPHRASE")


def _executable() -> str | None:
    """The ``vault`` command: ``KEYRING_PROPERTY_EXECUTABLE``, else ``vault`` on PATH."""
    return shutil.which(os.environ.get("KEYRING_PROPERTY_EXECUTABLE") or "vault")


def _vault_path() -> str | None:
    """The vault file, in the order the ``vault`` command looks for it."""
    env = os.environ
    if env.get("VAULT_PATH"):
        return env["VAULT_PATH"]
    if env.get("XDG_DATA_HOME"):
        return os.path.join(env["XDG_DATA_HOME"], "vault", "default.vault")
    if env.get("HOME"):
        return os.path.join(env["HOME"], ".local", "share", "vault", "default.vault")
    return None


def _has_terminal() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


class VaultKitKeyring(backend.KeyringBackend):
    """Passwords as VaultKit items: keyring's service is the item's service,
    keyring's username its account."""

    #: The ``vault`` command to run; settable with ``KEYRING_PROPERTY_EXECUTABLE``.
    executable: str | None = None

    @properties.classproperty
    def priority(cls) -> float:
        """Viable when the ``vault`` command, a vault file and a way to unlock it
        all exist. Then 1: above keyring's fail and keyrings.alt's file backends
        (below 1), below the Secret Service (5), so on a desktop the Secret Service
        stays first, and on a headless server without D-Bus this backend is chosen
        instead of keyring's fail backend or a D-Bus call that waits forever."""
        if _executable() is None:
            raise RuntimeError("no 'vault' command on PATH (or KEYRING_PROPERTY_EXECUTABLE)")
        path = _vault_path()
        if path is None or not os.path.exists(path):
            raise RuntimeError(f"no vault at {path}; create one with 'vault init'")
        if not any(os.environ.get(name) for name in UNLOCK_VARIABLES) and not _has_terminal():
            raise RuntimeError("nothing unlocks the vault: set VAULT_KEY_FILE or VAULT_PASSPHRASE_FILE")
        return 1

    # MARK: keyring's API

    def get_password(self, service: str, username: str) -> str | None:
        result = self._run(["get", "--", service, username])
        if result.returncode == ITEM_NOT_FOUND:
            return None
        self._check(result, errors.KeyringError)
        return self._decode_secret(result.stdout)

    def set_password(self, service: str, username: str, password: str) -> None:
        # `vault set` removes exactly one trailing newline, so one is always added:
        # a password that itself ends in a newline keeps it.
        result = self._run(["set", "--", service, username], stdin=password.encode("utf-8") + b"\n")
        self._check(result, errors.PasswordSetError)

    def delete_password(self, service: str, username: str) -> None:
        result = self._run(["delete", "--", service, username])
        if result.returncode == ITEM_NOT_FOUND:
            raise errors.PasswordDeleteError("password not found")
        self._check(result, errors.PasswordDeleteError)

    def get_credential(self, service: str, username: str | None) -> credentials.Credential | None:
        """With a username, that account's password; without one, the first
        account of the service (sorted as ``vault list`` sorts), or None."""
        if username is None:
            if not service:
                return None
            result = self._run(["list", "--json", "--service", service])
            self._check(result, errors.KeyringError)
            items = json.loads(result.stdout.decode("utf-8"))
            if not items:
                return None
            username = items[0]["account"]
        password = self.get_password(service, username)
        if password is None:
            return None
        return credentials.SimpleCredential(username, password)

    # MARK: Running `vault`

    def _run(self, arguments: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        executable = shutil.which(self.executable) if self.executable else _executable()
        if executable is None:
            raise errors.KeyringError("no 'vault' command on PATH (or KEYRING_PROPERTY_EXECUTABLE)")
        # The environment is inherited unchanged: nothing is added to it.
        return subprocess.run([executable, *arguments], input=stdin, capture_output=True, check=False)

    @staticmethod
    def _check(result: subprocess.CompletedProcess[bytes], error: type[errors.KeyringError]) -> None:
        if result.returncode != 0:
            # `vault` errors are one line that never holds a secret.
            message = result.stderr.decode("utf-8", "replace").strip() or f"vault exited with status {result.returncode}"
            raise error(message)

    @staticmethod
    def _decode_secret(output: bytes) -> str:
        # `vault get` writes the secret and exactly one newline.
        if output.endswith(b"\n"):
            output = output[:-1]
        try:
            return output.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.KeyringError("the stored secret is not UTF-8 text, so it is not a keyring password") from None
