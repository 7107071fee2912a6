"""Lock and Unlock of a passphrase vault through `vault secret-service`: Lock closes the
vault (GetSecret then refuses with IsLocked); Unlock returns an
org.freedesktop.Secret.Prompt whose Prompt asks on the provider's terminal (when it has
one) and completes when the passphrase is typed there or when `vault unlock` in another
terminal gives the agent the vault, or completes dismissed on Dismiss, at the prompt
timeout, or when the provider stops, so a client never waits forever.

Each test starts its own session bus and provider on a vault of its own. Run by
scripts/test-secret-service.sh, which sets VAULT_CLI to the `vault` binary."""

import fcntl
import os
import select
import signal
import subprocess
import tempfile
import termios
import time
from contextlib import closing

import pytest
import secretstorage
from jeepney import DBusAddress, MatchRule, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

PASSPHRASE = b"correct horse battery staple"
VAULT = "/org/freedesktop/secrets/collection/vault"
SERVICE = DBusAddress("/org/freedesktop/secrets", "org.freedesktop.secrets", "org.freedesktop.Secret.Service")
BUS = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")


def call(connection, address, method, signature=None, *body):
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body))
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


class Provider:
    """A private bus, a passphrase vault, and `vault secret-service` on them."""

    def __init__(self, on_terminal, prompt_timeout=3):
        self.work = tempfile.TemporaryDirectory()
        work = self.work.name
        os.mkdir(f"{work}/runtime", 0o700)
        os.mkdir(f"{work}/state", 0o700)
        with open(os.open(f"{work}/passphrase", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(PASSPHRASE + b"\n")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_") and k != "DBUS_SESSION_BUS_ADDRESS"}
        self.env.update(VAULT_PATH=f"{work}/locked.vault", XDG_RUNTIME_DIR=f"{work}/runtime", XDG_STATE_HOME=f"{work}/state")
        subprocess.run([os.environ["VAULT_CLI"], "init"], env={**self.env, "VAULT_PASSPHRASE_FILE": f"{work}/passphrase"},
                       stdin=subprocess.DEVNULL, check=True, capture_output=True)
        bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--nopidfile", "--print-address=1", "--print-pid=1"],
                             check=True, capture_output=True, text=True).stdout.split("\n")
        self.address, self.bus_pid = bus[0], int(bus[1])
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        self.master = None
        if on_terminal:
            # The provider's controlling terminal is a pty this test types on.
            self.master, slave = os.openpty()
            def controlling_terminal():
                os.setsid()
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            self.process = subprocess.Popen([os.environ["VAULT_CLI"], "secret-service", "--prompt-timeout", str(prompt_timeout)], env=self.env, stdin=slave, stdout=slave,
                                            stderr=subprocess.PIPE, preexec_fn=controlling_terminal)
            os.close(slave)
            self.read_terminal_until(b"Passphrase")
            os.write(self.master, PASSPHRASE + b"\n")
        else:
            # No terminal at all; the passphrase for the start comes from a file.
            self.process = subprocess.Popen([os.environ["VAULT_CLI"], "secret-service", "--prompt-timeout", str(prompt_timeout)],
                                            env={**self.env, "VAULT_PASSPHRASE_FILE": f"{work}/passphrase"},
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        subprocess.run(["gdbus", "wait", "--session", "--timeout", "60", "org.freedesktop.secrets"], env=self.env, check=True)
        self.connection = open_dbus_connection(self.address)

    def read_terminal_until(self, marker, timeout=30):
        seen = b""
        deadline = time.monotonic() + timeout
        while marker not in seen:
            left = deadline - time.monotonic()
            assert left > 0, f"the provider's terminal never showed {marker!r}: {seen!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                seen += os.read(self.master, 4096)
        return seen

    def vault_unlock(self):
        """`vault unlock` in another terminal: the agent, started here, holds the vault."""
        subprocess.run([os.environ["VAULT_CLI"], "unlock"], env={**self.env, "VAULT_PASSPHRASE_FILE": f"{self.work.name}/passphrase"},
                       stdin=subprocess.DEVNULL, check=True, capture_output=True)

    def close(self):
        self.connection.close()
        subprocess.run([os.environ["VAULT_CLI"], "agent", "stop"], env=self.env, stdin=subprocess.DEVNULL, capture_output=True)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.kill(self.bus_pid, signal.SIGTERM)
        if self.master is not None:
            os.close(self.master)
        self.work.cleanup()


@pytest.fixture
def on_terminal():
    provider = Provider(on_terminal=True)
    yield provider
    provider.close()


@pytest.fixture
def headless():
    provider = Provider(on_terminal=False)
    yield provider
    provider.close()


@pytest.fixture
def headless_waiting():
    """No terminal, and prompts that wait long enough for a `vault unlock` elsewhere."""
    provider = Provider(on_terminal=False, prompt_timeout=90)
    yield provider
    provider.close()


def store_item(connection):
    collection = secretstorage.get_default_collection(connection)
    return collection.create_item("locked test", {"service": "locked.example.com", "username": "frank"}, b"locked-secret")


def lock_and_check(provider, item):
    connection = provider.connection
    assert call(connection, SERVICE, "Lock", "ao", [VAULT]) == ([VAULT], "/")
    _, session = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, DBusAddress(item.item_path, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "GetSecret", "o", session)
    assert refused.value.name == "org.freedesktop.Secret.Error.IsLocked"
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, SERVICE, "GetSecrets", "aoo", [item.item_path], session)
    assert refused.value.name == "org.freedesktop.Secret.Error.IsLocked"
    assert call(connection, SERVICE, "SearchItems", "a{ss}", {"service": "locked.example.com"}) == ([], [item.item_path])
    assert item.is_locked()
    return session


def completed(provider, prompt, method, *body, answer=None):
    """Calls the prompt's method, then `answer` (if given), and returns its Completed
    signal's (dismissed, result)."""
    connection = provider.connection
    rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed", path=prompt)
    call(connection, BUS, "AddMatch", "s", rule.serialise())
    with connection.filter(rule) as signals:
        call(connection, DBusAddress(prompt, "org.freedesktop.secrets", "org.freedesktop.Secret.Prompt"), method, "s" if body else None, *body)
        if provider.master is not None and method == "Prompt":
            provider.read_terminal_until(b"Passphrase")
            os.write(provider.master, b"wrong passphrase\n")
            provider.read_terminal_until(b"does not open")
            os.write(provider.master, PASSPHRASE + b"\n")
        if answer is not None:
            answer()
        return connection.recv_until_filtered(signals, timeout=60).body


def test_unlock_asks_on_the_providers_terminal(on_terminal):
    item = store_item(on_terminal.connection)
    session = lock_and_check(on_terminal, item)
    unlocked, prompt = call(on_terminal.connection, SERVICE, "Unlock", "ao", [VAULT])
    assert unlocked == [] and prompt.startswith("/org/freedesktop/secrets/prompt/")
    dismissed, result = completed(on_terminal, prompt, "Prompt", "")
    assert (dismissed, result) == (False, ("ao", [VAULT]))
    assert not item.is_locked()
    (_, _, value, _), = call(on_terminal.connection, DBusAddress(item.item_path, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "GetSecret", "o", session)
    assert bytes(value) == b"locked-secret"


def test_sigterm_dismisses_a_waiting_prompt_and_exits_cleanly(on_terminal):
    store_item(on_terminal.connection)
    call(on_terminal.connection, SERVICE, "Lock", "ao", [VAULT])
    _, prompt = call(on_terminal.connection, SERVICE, "Unlock", "ao", [VAULT])
    connection = on_terminal.connection
    rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed", path=prompt)
    call(connection, BUS, "AddMatch", "s", rule.serialise())
    with connection.filter(rule) as signals:
        call(connection, DBusAddress(prompt, "org.freedesktop.secrets", "org.freedesktop.Secret.Prompt"), "Prompt", "s", "")
        on_terminal.read_terminal_until(b"Passphrase")
        on_terminal.process.send_signal(signal.SIGTERM)
        assert connection.recv_until_filtered(signals, timeout=30).body == (True, ("ao", []))
    assert on_terminal.process.wait(timeout=30) == 0
    assert call(connection, BUS, "NameHasOwner", "s", "org.freedesktop.secrets") == (False,)
    # The terminal's echo is back.
    assert termios.tcgetattr(on_terminal.master)[3] & termios.ECHO


def test_without_a_terminal_the_prompt_is_dismissed(headless):
    item = store_item(headless.connection)
    lock_and_check(headless, item)
    _, prompt = call(headless.connection, SERVICE, "Unlock", "ao", [VAULT])
    assert completed(headless, prompt, "Prompt", "") == (True, ("ao", []))
    assert item.is_locked()
    # SecretStorage's own unlock sees the prompt dismissed, and does not hang.
    assert secretstorage.get_default_collection(headless.connection).unlock() is True
    # Dismiss before Prompt ends it too.
    _, prompt = call(headless.connection, SERVICE, "Unlock", "ao", [VAULT])
    assert completed(headless, prompt, "Dismiss") == (True, ("ao", []))
    with pytest.raises(DBusErrorResponse) as gone:
        call(headless.connection, DBusAddress(prompt, "org.freedesktop.secrets", "org.freedesktop.Secret.Prompt"), "Prompt", "s", "")
    assert gone.value.name == "org.freedesktop.Secret.Error.NoSuchObject"


def test_vault_unlock_in_another_terminal_answers_a_waiting_prompt(headless_waiting):
    provider = headless_waiting
    item = store_item(provider.connection)
    session = lock_and_check(provider, item)
    _, prompt = call(provider.connection, SERVICE, "Unlock", "ao", [VAULT])
    assert prompt != "/"
    started = time.monotonic()
    assert completed(provider, prompt, "Prompt", "", answer=provider.vault_unlock) == (False, ("ao", [VAULT]))
    # Answered by the agent, well before the 90 s timeout would have dismissed it.
    assert time.monotonic() - started < 60
    assert not item.is_locked()
    (_, _, value, _), = call(provider.connection, DBusAddress(item.item_path, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "GetSecret", "o", session)
    assert bytes(value) == b"locked-secret"


def test_a_prompt_nobody_answers_is_dismissed_at_its_timeout(headless):
    call(headless.connection, SERVICE, "Lock", "ao", [VAULT])
    _, prompt = call(headless.connection, SERVICE, "Unlock", "ao", [VAULT])
    started = time.monotonic()
    assert completed(headless, prompt, "Prompt", "") == (True, ("ao", []))
    # The headless provider's --prompt-timeout is 3 s: it waited for an answer, then gave up.
    assert 2.5 <= time.monotonic() - started < 30


def test_another_client_cannot_answer_a_prompt(headless):
    call(headless.connection, SERVICE, "Lock", "ao", [VAULT])
    _, prompt = call(headless.connection, SERVICE, "Unlock", "ao", [VAULT])
    with closing(open_dbus_connection(headless.address)) as other:
        with pytest.raises(DBusErrorResponse) as refused:
            call(other, DBusAddress(prompt, "org.freedesktop.secrets", "org.freedesktop.Secret.Prompt"), "Dismiss")
        assert refused.value.name == "org.freedesktop.Secret.Error.NoSuchObject"
