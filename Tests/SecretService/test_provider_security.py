"""Attacks on `vault secret-service` as a client on the session bus would make them, with
jeepney (SecretStorage's D-Bus library): hostile attribute maps, another client's session,
a client that disconnects, plain sessions. Run by scripts/test-secret-service.sh against
the provider on DBUS_SESSION_BUS_ADDRESS."""

from contextlib import closing

import pytest
from jeepney import DBusAddress, HeaderFields, MatchRule, new_method_call, message_bus, Properties
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

SERVICE = DBusAddress("/org/freedesktop/secrets", "org.freedesktop.secrets", "org.freedesktop.Secret.Service")
COLLECTION = DBusAddress("/org/freedesktop/secrets/aliases/default", "org.freedesktop.secrets", "org.freedesktop.Secret.Collection")


def call(connection, address, method, signature=None, *body):
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body))
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def open_plain_session(connection):
    _, path = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
    return path


def create_item(connection, session, attributes, secret=b"s3cret", label="test"):
    properties = {
        "org.freedesktop.Secret.Item.Label": ("s", label),
        "org.freedesktop.Secret.Item.Attributes": ("a{ss}", attributes),
    }
    item, _ = call(connection, COLLECTION, "CreateItem", "a{sv}(oayays)b", properties, (session, b"", secret, "text/plain"), True)
    return item


def get_secret(connection, item, session):
    address = DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item")
    (_, _, value, _), = call(connection, address, "GetSecret", "o", session)
    return bytes(value)


@pytest.fixture
def connection():
    with closing(open_dbus_connection("SESSION")) as connection:
        yield connection


def still_serving(connection):
    return call(connection, SERVICE, "ReadAlias", "s", "default") == ("/org/freedesktop/secrets/collection/vault",)


def test_plain_session_round_trip(connection):
    session = open_plain_session(connection)
    item = create_item(connection, session, {"application": "vault-security-test", "case": "plain"}, b"\x00binary\xff")
    try:
        assert get_secret(connection, item, session) == b"\x00binary\xff"
    finally:
        call(connection, DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "Delete")


@pytest.mark.parametrize("attributes, what", [
    ({f"name{i}": "v" for i in range(5000)}, "thousands of attributes"),
    ({"huge": "x" * (1024 * 1024)}, "a one-megabyte value"),
    ({"x" * 70000: "v"}, "a huge attribute name"),
])
def test_hostile_attribute_maps_get_an_error_not_a_crash(connection, attributes, what):
    session = open_plain_session(connection)
    with pytest.raises(DBusErrorResponse) as refused:
        create_item(connection, session, attributes)
    assert refused.value.name == "org.freedesktop.DBus.Error.InvalidArgs", what
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, SERVICE, "SearchItems", "a{ss}", attributes)
    assert refused.value.name == "org.freedesktop.DBus.Error.InvalidArgs", what
    assert still_serving(connection)


def test_wrong_argument_types_get_an_error(connection):
    for method, signature, body in [("SearchItems", "s", ("not a map",)), ("OpenSession", "ss", ("plain", "x")),
                                    ("OpenSession", "sv", ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("s", "not a key"))),
                                    ("OpenSession", "sv", ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("ay", b"\x01"))),
                                    ("GetSecrets", "aoo", (["/org/freedesktop/secrets/collection/vault/i1"], "/nope"))]:
        with pytest.raises(DBusErrorResponse):
            call(connection, SERVICE, method, signature, *body)
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, SERVICE, "OpenSession", "sv", "rot13", ("s", ""))
    assert refused.value.name == "org.freedesktop.DBus.Error.NotSupported"
    assert still_serving(connection)


def test_another_clients_session_is_refused(connection):
    session = open_plain_session(connection)
    item = create_item(connection, session, {"application": "vault-security-test", "case": "session-theft"})
    try:
        with closing(open_dbus_connection("SESSION")) as thief:
            with pytest.raises(DBusErrorResponse) as refused:
                get_secret(thief, item, session)
            assert refused.value.name == "org.freedesktop.Secret.Error.NoSession"
        assert get_secret(connection, item, session) == b"s3cret"
    finally:
        call(connection, DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "Delete")


def test_a_client_that_disconnects_loses_its_sessions(connection):
    introspect = lambda path: call(connection, DBusAddress(path, "org.freedesktop.secrets", "org.freedesktop.DBus.Introspectable"), "Introspect")
    watcher = message_bus
    rule = MatchRule(type="signal", sender="org.freedesktop.DBus", interface="org.freedesktop.DBus", member="NameOwnerChanged")
    call(connection, watcher, "AddMatch", "s", rule.serialise())
    leaver = open_dbus_connection("SESSION")
    leaver_name = leaver.unique_name
    session = open_plain_session(leaver)
    assert introspect(session)
    with connection.filter(rule) as signals:
        leaver.close()
        while True:
            name, _, new_owner = connection.recv_until_filtered(signals).body
            if name == leaver_name and new_owner == "":
                break
    # The bus told the provider before it forwards this call, so the session is gone.
    with pytest.raises(DBusErrorResponse) as gone:
        introspect(session)
    assert gone.value.name == "org.freedesktop.Secret.Error.NoSuchObject"


def test_unknown_objects_and_methods_get_the_errors_clients_expect(connection):
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, DBusAddress("/not/existing/path", "org.freedesktop.secrets", "org.freedesktop.DBus.Properties"), "Get", "ss", "org.freedesktop.Secret.Item", "Label")
    assert refused.value.name == "org.freedesktop.Secret.Error.NoSuchObject"
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, SERVICE, "Explode")
    assert refused.value.name == "org.freedesktop.DBus.Error.UnknownMethod"


def test_lock_withholds_secrets_until_unlock(connection):
    session = open_plain_session(connection)
    item = create_item(connection, session, {"application": "vault-security-test", "case": "lock"})
    try:
        call(connection, SERVICE, "Lock", "ao", ["/org/freedesktop/secrets/collection/vault"])
        with pytest.raises(DBusErrorResponse) as refused:
            get_secret(connection, item, session)
        assert refused.value.name == "org.freedesktop.Secret.Error.IsLocked"
        unlocked, locked = call(connection, SERVICE, "SearchItems", "a{ss}", {"case": "lock"})
        assert (unlocked, locked) == ([], [item])
        unlocked, prompt = call(connection, SERVICE, "Unlock", "ao", ["/org/freedesktop/secrets/collection/vault"])
        assert prompt == "/" and unlocked == ["/org/freedesktop/secrets/collection/vault"]
        assert get_secret(connection, item, session) == b"s3cret"
    finally:
        call(connection, SERVICE, "Unlock", "ao", ["/org/freedesktop/secrets/collection/vault"])
        call(connection, DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "Delete")


def test_a_huge_label_or_content_type_gets_an_error(connection):
    session = open_plain_session(connection)
    with pytest.raises(DBusErrorResponse) as refused:
        create_item(connection, session, {"application": "vault-security-test"}, label="l" * 70000)
    assert refused.value.name == "org.freedesktop.DBus.Error.InvalidArgs"
    properties = {"org.freedesktop.Secret.Item.Attributes": ("a{ss}", {"application": "vault-security-test"})}
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, COLLECTION, "CreateItem", "a{sv}(oayays)b", properties, (session, b"", b"x", "t" * 70000), True)
    assert refused.value.name == "org.freedesktop.DBus.Error.InvalidArgs"
    assert still_serving(connection)


def test_non_utf8_strings_never_reach_the_provider():
    """D-Bus strings must be UTF-8; a message with an attribute that is not ends the sender's
    connection at the bus, and the provider keeps serving everyone else."""
    with closing(open_dbus_connection("SESSION")) as sender:
        message = new_method_call(SERVICE, "SearchItems", "a{ss}", ({"name": "MARKER"},))
        data = message.serialise(serial=99).replace(b"MARKER", b"\xff\xfe\xc0\x80AB")
        sender.sock.sendall(data)
        try:
            reply = sender.receive(timeout=10)
            while reply.header.fields.get(HeaderFields.reply_serial) != 99:
                reply = sender.receive(timeout=10)
            outcome = reply.header.message_type.name
        except (ConnectionError, EOFError):
            outcome = "disconnected"
        assert outcome in ("error", "disconnected")
    with closing(open_dbus_connection("SESSION")) as other:
        assert still_serving(other)


@pytest.mark.parametrize("path", [
    "/org/freedesktop/secrets/collection/vault/i0",
    "/org/freedesktop/secrets/collection/vault/i999999",
    "/org/freedesktop/secrets/collection/vault/i1/i1",
    "/org/freedesktop/secrets/collection/missing",
    "/org/freedesktop/secrets/collection/missing/i1",
    "/org/freedesktop/secrets/aliases/missing",
    "/org/freedesktop/secrets/aliases/missing/i1",
    "/org/freedesktop/secrets/session/s999999",
    "/org/freedesktop/secrets/prompt/p999999",
    "/org/freedesktop/secrets/prompt/px",
    "/org/freedesktop/secrets/collection",
    "/org/freedesktop/secrets/aliases",
    "/org",
])
def test_bad_object_paths_get_no_such_object(connection, path):
    for interface, method, signature, body in [("org.freedesktop.DBus.Properties", "GetAll", "s", ("",)),
                                               ("org.freedesktop.Secret.Item", "GetSecret", "o", ("/",)),
                                               ("org.freedesktop.Secret.Collection", "Delete", None, ())]:
        with pytest.raises(DBusErrorResponse) as refused:
            call(connection, DBusAddress(path, "org.freedesktop.secrets", interface), method, signature, *body)
        assert refused.value.name == "org.freedesktop.Secret.Error.NoSuchObject", (path, method)
    session = open_plain_session(connection)
    assert call(connection, SERVICE, "GetSecrets", "aoo", [path], session) == ({},)
    assert call(connection, SERVICE, "Lock", "ao", [path]) == ([], "/")
    assert call(connection, SERVICE, "Unlock", "ao", [path]) == ([], "/")
    assert still_serving(connection)


def test_unknown_sessions_get_no_session(connection):
    session = open_plain_session(connection)
    item = create_item(connection, session, {"application": "vault-security-test", "case": "unknown-session"})
    try:
        item_address = DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item")
        for unknown in ["/", "/org/freedesktop/secrets/session/s999999", "/org/freedesktop/secrets/collection/vault"]:
            for method, signature, body in [("GetSecret", "o", (unknown,)), ("SetSecret", "(oayays)", ((unknown, b"", b"x", "text/plain"),))]:
                with pytest.raises(DBusErrorResponse) as refused:
                    call(connection, item_address, method, signature, *body)
                assert refused.value.name == "org.freedesktop.Secret.Error.NoSession", (unknown, method)
            with pytest.raises(DBusErrorResponse) as refused:
                call(connection, SERVICE, "GetSecrets", "aoo", [item], unknown)
            assert refused.value.name == "org.freedesktop.Secret.Error.NoSession"
            with pytest.raises(DBusErrorResponse) as refused:
                create_item(connection, unknown, {"application": "vault-security-test", "case": "unknown-session-create"})
            assert refused.value.name == "org.freedesktop.Secret.Error.NoSession"
        # A closed session is unknown too.
        call(connection, DBusAddress(session, "org.freedesktop.secrets", "org.freedesktop.Secret.Session"), "Close")
        with pytest.raises(DBusErrorResponse) as refused:
            get_secret(connection, item, session)
        assert refused.value.name in ("org.freedesktop.Secret.Error.NoSession", "org.freedesktop.Secret.Error.NoSuchObject")
    finally:
        call(connection, DBusAddress(item, "org.freedesktop.secrets", "org.freedesktop.Secret.Item"), "Delete")
    assert still_serving(connection)


@pytest.mark.parametrize("algorithm, argument", [
    ("rot13", ("s", "")),
    ("", ("s", "")),
    ("PLAIN", ("s", "")),
    ("dh-ietf1024-sha256-aes128-cbc-pkcs7 ", ("ay", b"\x02" * 128)),
    ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("ay", b"\x00" * 128)),
    ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("ay", b"\xff" * 4096)),
    ("dh-ietf1024-sha256-aes128-cbc-pkcs7", ("s", "")),
])
def test_wrong_algorithms_get_an_error(connection, algorithm, argument):
    with pytest.raises(DBusErrorResponse) as refused:
        call(connection, SERVICE, "OpenSession", "sv", algorithm, argument)
    assert refused.value.name in ("org.freedesktop.DBus.Error.NotSupported", "org.freedesktop.DBus.Error.InvalidArgs")
    assert still_serving(connection)
