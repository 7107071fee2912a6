"""A `plain` session's secret does not stay in the provider's memory once a call is
answered: the provider clears it in sd-bus's read buffer after copying it out, and sd-bus
clears the buffers of replies that carry one (they are marked sensitive). Scans every
writable mapping of the provider (/proc/PID/mem; needs root, or ptrace rights over it, as
the provider is not dumpable). Run by scripts/test-secret-service.sh."""

import os
import re
import secrets
from contextlib import closing

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

SERVICE = DBusAddress("/org/freedesktop/secrets", "org.freedesktop.secrets", "org.freedesktop.Secret.Service")
COLLECTION = DBusAddress("/org/freedesktop/secrets/aliases/default", "org.freedesktop.secrets", "org.freedesktop.Secret.Collection")
BUS = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")


def call(connection, address, method, signature=None, *body):
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body))
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def occurrences(pid, needle):
    """How many times `needle` is in the provider's writable memory."""
    found = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "w" not in fields[1] or (len(fields) > 5 and fields[5].startswith("[v")):
                continue
            try:
                mem.seek(start)
                found += mem.read(end - start).count(needle)
            except (OSError, ValueError, OverflowError):
                continue
    return found


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another process's memory needs root")
def test_plain_secrets_do_not_stay_in_the_providers_memory():
    with closing(open_dbus_connection("SESSION")) as connection:
        (pid,) = call(connection, BUS, "GetConnectionUnixProcessID", "s", "org.freedesktop.secrets")
        _, session = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
        secret = b"memscan-" + secrets.token_hex(24).encode()
        properties = {"org.freedesktop.Secret.Item.Label": ("s", "memory"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"application": "memory-test"})}
        item, _ = call(connection, COLLECTION, "CreateItem", "a{sv}(oayays)b", properties, (session, b"", secret, "text/plain"), True)
        try:
            item_address = DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item")
            for _ in range(3):
                (_, _, value, _), = call(connection, item_address, "GetSecret", "o", session)
                assert bytes(value) == secret
            (found,) = call(connection, SERVICE, "GetSecrets", "aoo", [item], session)
            assert bytes(found[item][2]) == secret
            # The scan itself must be able to find a secret: this process's copy.
            assert occurrences(os.getpid(), secret) > 0
            assert occurrences(pid, secret) == 0
        finally:
            call(connection, DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "Delete")
