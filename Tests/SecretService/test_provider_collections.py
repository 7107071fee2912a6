"""Collections besides the vault's own, and aliases, through SecretStorage (a client
nobody here wrote) and plain D-Bus calls: CreateCollection and Delete, items that belong
to a collection, ReadAlias/SetAlias, and the CollectionCreated/Deleted/Changed signals.
Run by scripts/test-secret-service.sh against the provider on DBUS_SESSION_BUS_ADDRESS."""

from contextlib import closing

import pytest
import secretstorage
from jeepney import DBusAddress, MatchRule, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

SERVICE = DBusAddress("/org/freedesktop/secrets", "org.freedesktop.secrets", "org.freedesktop.Secret.Service")
VAULT = "/org/freedesktop/secrets/collection/vault"


def call(connection, address, method, signature=None, *body):
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, body))
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


@pytest.fixture
def connection():
    with closing(secretstorage.dbus_init()) as connection:
        yield connection


@pytest.fixture
def raw():
    with closing(open_dbus_connection("SESSION")) as raw:
        yield raw


def service_signals(raw, member):
    rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Service", member=member, path="/org/freedesktop/secrets")
    call(raw, DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus"), "AddMatch", "s", rule.serialise())
    return rule


def test_a_created_collection_holds_its_own_items(connection):
    collection = secretstorage.create_collection(connection, "Work Secrets")
    try:
        assert collection.collection_path == "/org/freedesktop/secrets/collection/Work_Secrets"
        assert collection.get_label() == "Work Secrets"
        assert collection.collection_path in [c.collection_path for c in secretstorage.get_all_collections(connection)]
        item = collection.create_item("work item", {"service": "work.example.com", "username": "erin"}, b"work-secret")
        assert item.item_path.startswith(collection.collection_path + "/i")
        assert item.get_secret() == b"work-secret"
        assert [i.item_path for i in collection.get_all_items()] == [item.item_path]
        assert [i.item_path for i in collection.search_items({"service": "work.example.com"})] == [item.item_path]
        assert call(connection, SERVICE, "ReadAlias", "s", "default") == (VAULT,)
        default = secretstorage.Collection(connection, VAULT)
        assert list(default.search_items({"service": "work.example.com"})) == []
        # The service searches every collection.
        assert [i.item_path for i in secretstorage.search_items(connection, {"service": "work.example.com"})] == [item.item_path]
        # The same attributes in the vault's collection are another item.
        other = default.create_item("vault item", {"service": "work.example.com", "username": "erin"}, b"vault-secret", replace=True)
        try:
            assert other.item_path != item.item_path and item.get_secret() == b"work-secret"
        finally:
            other.delete()
    finally:
        collection.delete()
    assert collection.collection_path not in [c.collection_path for c in secretstorage.get_all_collections(connection)]
    assert list(secretstorage.search_items(connection, {"service": "work.example.com"})) == []


def test_a_collection_and_its_items_outlive_nothing_but_delete(connection, raw):
    collection = secretstorage.create_collection(connection, "Doomed")
    item = collection.create_item("doomed", {"application": "collections-test"}, b"x")
    collection.delete()
    for path in (collection.collection_path, item.item_path):
        with pytest.raises(DBusErrorResponse) as gone:
            call(raw, DBusAddress(path, "org.freedesktop.secrets", "org.freedesktop.DBus.Properties"), "Get", "ss", "", "Label")
        assert gone.value.name == "org.freedesktop.Secret.Error.NoSuchObject"
    with pytest.raises(DBusErrorResponse) as refused:
        call(raw, DBusAddress(VAULT, "org.freedesktop.secrets", "org.freedesktop.Secret.Collection"), "Delete")
    assert refused.value.name == "org.freedesktop.DBus.Error.NotSupported"


def test_two_collections_with_one_label_get_two_paths(connection):
    first = secretstorage.create_collection(connection, "Twin")
    second = secretstorage.create_collection(connection, "Twin")
    try:
        assert (first.collection_path, second.collection_path) == ("/org/freedesktop/secrets/collection/Twin", "/org/freedesktop/secrets/collection/Twin_2")
    finally:
        first.delete()
        second.delete()


def test_aliases(connection, raw):
    assert call(raw, SERVICE, "ReadAlias", "s", "default") == (VAULT,)
    assert call(raw, SERVICE, "ReadAlias", "s", "nothing") == ("/",)
    collection = secretstorage.create_collection(connection, "Aliased", alias="mine")
    try:
        assert call(raw, SERVICE, "ReadAlias", "s", "mine") == (collection.collection_path,)
        # CreateCollection with an alias that exists returns that collection.
        assert secretstorage.create_collection(connection, "Other", alias="mine").collection_path == collection.collection_path
        assert secretstorage.get_collection_by_alias(connection, "mine").collection_path == collection.collection_path
        item = collection.create_item("via alias", {"application": "alias-test"}, b"aliased")
        alias_item = DBusAddress(item.item_path.replace(collection.collection_path, "/org/freedesktop/secrets/aliases/mine"), "org.freedesktop.secrets", "org.freedesktop.DBus.Properties")
        assert call(raw, alias_item, "Get", "ss", "org.freedesktop.Secret.Item", "Label") == (("s", "via alias"),)
        # default moves to the collection and back.
        call(raw, SERVICE, "SetAlias", "so", "default", collection.collection_path)
        assert call(raw, SERVICE, "ReadAlias", "s", "default") == (collection.collection_path,)
        assert [i.item_path for i in secretstorage.get_default_collection(connection).get_all_items()] == [item.item_path]
        call(raw, SERVICE, "SetAlias", "so", "default", VAULT)
        assert call(raw, SERVICE, "ReadAlias", "s", "default") == (VAULT,)
        call(raw, SERVICE, "SetAlias", "so", "mine", "/")
        assert call(raw, SERVICE, "ReadAlias", "s", "mine") == ("/",)
        for name, target, error in [("mine", "/org/freedesktop/secrets/collection/missing", "org.freedesktop.Secret.Error.NoSuchObject"),
                                    ("bad-alias", collection.collection_path, "org.freedesktop.DBus.Error.InvalidArgs")]:
            with pytest.raises(DBusErrorResponse) as refused:
                call(raw, SERVICE, "SetAlias", "so", name, target)
            assert refused.value.name == error
    finally:
        collection.delete()


def test_collection_signals(connection, raw):
    rules = [service_signals(raw, member) for member in ("CollectionCreated", "CollectionChanged", "CollectionDeleted")]
    with raw.filter(rules[0]) as created, raw.filter(rules[1]) as changed, raw.filter(rules[2]) as deleted:
        collection = secretstorage.create_collection(connection, "Signalled")
        assert raw.recv_until_filtered(created, timeout=10).body == (collection.collection_path,)
        collection.set_label("Renamed")
        assert raw.recv_until_filtered(changed, timeout=10).body == (collection.collection_path,)
        assert collection.get_label() == "Renamed"
        collection.delete()
        assert raw.recv_until_filtered(deleted, timeout=10).body == (collection.collection_path,)
