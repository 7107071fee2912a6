#!/usr/bin/env python3
"""An independent reader of VaultKit vault files, written only from docs/FORMAT.md.

It shares no code with VaultKit: SQLite from Python's standard library, libsodium
through PyNaCl (`pip install pynacl`). The test suite runs it against vaults that
VaultKit wrote, which keeps FORMAT.md honest.

Usage:
    VAULT_PASSPHRASE=... reference_reader.py VAULT      # passphrase vault
    reference_reader.py VAULT --key-file KEYFILE         # raw-key vault (32 bytes)
    reference_reader.py VAULT --host-key-file KEYFILE --identity vkid1:...
                                                         # through a host key wrap (32-byte X25519 private key),
                                                         # if the vault identity signed the wraps (section 12.1)

Prints one JSON object per item (secret and generic data as hex), sorted by
service then account, and exits 1 with a message on any authentication failure,
including a manifest that does not match the rows. Reads formats 2, 3 and 4; with
--history, also one object per kept version (section 14), each with its "version"
number, after the items. Every row is checked, whatever its kind.
"""
import argparse
import json
import os
import sqlite3
import struct
import sys

import nacl.bindings as sodium
import nacl.hash
import nacl.encoding
import nacl.pwhash
import nacl.secret
import nacl.signing

APPLICATION_ID = 0x564C544B


def fail(message):
    print(f"reference_reader: {message}", file=sys.stderr)
    sys.exit(1)


def subkey(master_key, subkey_id):
    # crypto_kdf_derive_from_key: BLAKE2b-256 of nothing, keyed, salt = u64le(id) || 0*8,
    # personal = "VaultKit" || 0*8.
    return nacl.hash.blake2b(
        b"", digest_size=32, key=master_key,
        salt=struct.pack("<Q", subkey_id) + bytes(8),
        person=b"VaultKit" + bytes(8),
        encoder=nacl.encoding.RawEncoder,
    )


def lp(data):
    return struct.pack("<I", len(data)) + data


def keyed_hash(index_key, message):
    return nacl.hash.blake2b(message, digest_size=32, key=index_key, encoder=nacl.encoding.RawEncoder)


def parse_record(record):
    offset = 0

    def take(count):
        nonlocal offset
        if offset + count > len(record):
            fail("malformed record")
        chunk = record[offset:offset + count]
        offset += count
        return chunk

    def take_lp():
        (length,) = struct.unpack("<I", take(4))
        return take(length)

    provenance = {"kind": 1, "number": 0, "writer": "", "operation": 2}
    record_version = take(1)
    if record_version == b"\x02":
        provenance["kind"] = take(1)[0]
        if provenance["kind"] == 3:
            (retention,) = struct.unpack("<I", take(4))
            if offset != len(record):
                fail("trailing bytes in record")
            return {"kind": 3, "retention": retention}
        if provenance["kind"] not in (1, 2):
            fail("unknown record kind")
        (provenance["number"],) = struct.unpack("<Q", take(8))
        provenance["writer"] = take_lp().decode("utf-8")
        provenance["operation"] = take(1)[0]
        if provenance["kind"] == 2:
            (provenance["archived"],) = struct.unpack("<q", take(8))
            provenance["archived_by"] = take_lp().decode("utf-8")
            provenance["archived_because"] = take(1)[0]
    elif record_version != b"\x01":
        fail("unknown record version")
    service = take_lp().decode("utf-8")
    account = take_lp().decode("utf-8")
    flags = take(1)[0]
    if flags & ~0b11:
        fail("malformed record flags")
    label = take_lp().decode("utf-8") if flags & 1 else None
    generic = take_lp() if flags & 2 else None
    (created,) = struct.unpack("<q", take(8))
    (modified,) = struct.unpack("<q", take(8))
    secret = take_lp()
    if offset != len(record):
        fail("trailing bytes in record")
    return {"service": service, "account": account, "label": label, "generic": generic,
            "created": created, "modified": modified, "secret": secret, **provenance}


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def add(a, b):
    """Format 3: digests are 256-bit little-endian numbers, added modulo 2^256."""
    total = (int.from_bytes(a, "little") + int.from_bytes(b, "little")) % (1 << 256)
    return total.to_bytes(32, "little")


ZERO = bytes(32)


def header_bytes(version, vault_id, algorithm, salt, ops, mem, nonce, wrapped, check):
    """FORMAT.md section 6: the header fields the format-3 manifest tag covers."""
    return (struct.pack("<I", version) + vault_id + lp(algorithm.encode("utf-8")) + lp(salt or b"")
            + struct.pack("<QQ", ops or 0, mem or 0) + nonce + wrapped + check)


def host_wraps(db):
    """FORMAT.md section 12: the host key wraps, or None when the table does not exist."""
    exists = db.execute(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'vault_host_wraps'").fetchone()[0]
    if not exists:
        return None
    return list(db.execute("SELECT name, public_key, sealed_master_key FROM vault_host_wraps"))


def host_wraps_digest(wraps):
    """FORMAT.md section 12: unkeyed BLAKE2b-256 over the wraps in name byte order."""
    message = b"\x08"
    for name, public_key, sealed in sorted(wraps, key=lambda wrap: wrap[0].encode("utf-8")):
        message += lp(name.encode("utf-8")) + public_key + lp(sealed)
    return nacl.hash.blake2b(message, digest_size=32, encoder=nacl.encoding.RawEncoder)


def split_identity(wraps):
    """FORMAT.md section 12.1: the host rows, and the identity's row (name '') or None."""
    hosts = [wrap for wrap in wraps if wrap[0] != ""]
    identity = next((wrap for wrap in wraps if wrap[0] == ""), None)
    return hosts, identity


def parse_identity(row):
    """Section 12.1: (public key, nonce, sealed seed, signature) of the identity's row."""
    public_key, record = row[1], row[2]
    if len(public_key) != 32 or len(record) != 137 or record[0] != 1:
        fail("invalid vault identity record")
    return public_key, record[1:25], record[25:73], record[73:]


def check_identity_signature(wraps, vault_id, fingerprint):
    """Section 12.1: the host rows must be signed by the pinned identity."""
    hosts, row = split_identity(wraps)
    if row is None:
        fail("the host key wraps are signed by no vault identity")
    public_key, _, _, signature = parse_identity(row)
    if "vkid1:" + public_key.hex() != fingerprint:
        fail("the vault's identity is not the one pinned for this host key")
    message = b"VaultKit host wraps, identity 1" + vault_id + host_wraps_digest(hosts)
    try:
        nacl.signing.VerifyKey(public_key).verify(message, signature)
    except Exception:
        fail("the host key wraps are not the ones the vault's identity signed")
    return hosts


def check_identity_seed(wraps, kek):
    """Section 12.1: the seed opens under the identity key and is the public key's."""
    _, row = split_identity(wraps or [])
    if row is None:
        return
    public_key, nonce, sealed, _ = parse_identity(row)
    try:
        seed = nacl.secret.SecretBox(keyed_hash(kek, b"VaultKit vault identity, format 3")).decrypt(sealed, nonce)
    except Exception:
        fail("the vault identity's secret key does not open with this passphrase or key")
    if bytes(nacl.signing.SigningKey(seed).verify_key) != public_key:
        fail("the vault identity's secret key does not open with this passphrase or key")


def verify_manifest(db, manifest_key, version, header):
    """FORMAT.md "Manifest": bucket digests from the rows, root from the buckets, tag."""
    combine = add if version >= 3 else xor
    computed = {}
    previous = None
    for lookup_id, service_tag, item_nonce in db.execute(
        "SELECT lookup_id, service_tag, nonce FROM vault_items ORDER BY lookup_id"
    ):
        if len(lookup_id) != 32 or len(service_tag) != 32 or len(item_nonce) != 24:
            fail("invalid item row")
        if previous is not None and lookup_id <= previous:
            fail("an item row is stored twice")
        previous = lookup_id
        bucket = (lookup_id[0] << 2) | (lookup_id[1] >> 6)
        term = keyed_hash(manifest_key, b"\x03" + lookup_id + service_tag + item_nonce)
        computed[bucket] = combine(computed.get(bucket, ZERO), term)
    stored = {}
    root = ZERO
    for bucket, digest in db.execute("SELECT bucket, digest FROM vault_manifest"):
        if not 0 <= bucket < 1024 or len(digest) != 32 or digest == ZERO:
            fail("invalid manifest bucket")
        stored[bucket] = digest
        root = combine(root, keyed_hash(manifest_key, b"\x04" + struct.pack("<H", bucket) + digest))
    stored_root, stored_tag = db.execute("SELECT manifest_root, manifest_tag FROM vault_header").fetchone()
    if stored_root is None or stored_tag is None:
        fail("manifest root failed authentication")
    if version >= 3:
        (generation,) = db.execute("SELECT generation FROM vault_generation WHERE singleton = 1").fetchone()
        expected_tag = keyed_hash(manifest_key, b"\x06" + header + struct.pack("<Q", generation) + stored_root)
    else:
        expected_tag = keyed_hash(manifest_key, b"\x05" + stored_root)
    if expected_tag != stored_tag:
        fail("vault header or manifest root failed authentication")
    if root != stored_root:
        fail("manifest buckets do not match the manifest root")
    for bucket in set(computed) | set(stored):
        if computed.get(bucket, ZERO) != stored.get(bucket, ZERO):
            fail("an item was deleted, added or replaced with an older version")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vault")
    parser.add_argument("--key-file")
    parser.add_argument("--host-key-file")
    parser.add_argument("--identity")
    parser.add_argument("--history", action="store_true")
    args = parser.parse_args()

    db = sqlite3.connect(f"file:{args.vault}?mode=ro", uri=True)
    if db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
        fail("not a vault")
    (version, vault_id, algorithm, salt, ops, mem, nonce, wrapped, check) = db.execute(
        "SELECT format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit, "
        "master_key_nonce, wrapped_master_key, master_key_check FROM vault_header WHERE singleton = 1"
    ).fetchone()
    if version not in (2, 3, 4):
        fail(f"unsupported format version {version}")

    wraps = host_wraps(db) if version >= 3 else None
    if args.host_key_file:
        with open(args.host_key_file, "rb") as handle:
            private_key = handle.read()
        public_key = sodium.crypto_scalarmult_base(private_key)
        if wraps is None:
            fail("wrong passphrase or key")
        if args.identity is None:
            fail("a host key needs --identity (section 12.1)")
        hosts = check_identity_signature(wraps, vault_id, args.identity)
        sealed = next((wrap[2] for wrap in hosts if wrap[1] == public_key), None)
        if sealed is None:
            fail("wrong passphrase or key")
        try:
            master = sodium.crypto_box_seal_open(sealed, public_key, private_key)
        except Exception:
            fail("wrong passphrase or key")
    elif algorithm == "argon2id13":
        passphrase = os.environ.get("VAULT_PASSPHRASE")
        if passphrase is None:
            fail("set VAULT_PASSPHRASE")
        kek = nacl.pwhash.argon2id.kdf(32, passphrase.encode("utf-8"), salt, opslimit=ops, memlimit=mem)
    elif algorithm == "raw":
        with open(args.key_file, "rb") as handle:
            kek = handle.read()
    else:
        fail(f"unknown kdf {algorithm}")

    if args.host_key_file:
        pass
    elif version >= 3:
        check_identity_seed(wraps, kek)
        # Format 3 wraps the master key under a key derived for the format (FORMAT.md section 3).
        kek = keyed_hash(kek, b"VaultKit key wrapping, format 3")
    if not args.host_key_file:
        try:
            master = nacl.secret.SecretBox(kek).decrypt(wrapped, nonce)
        except Exception:
            fail("wrong passphrase or key")
    if subkey(master, 3) != check:
        fail("master key check mismatch")
    sealing_key, index_key, manifest_key = subkey(master, 1), subkey(master, 2), subkey(master, 4)

    items, versions = [], []
    for lookup_id, service_tag, item_nonce, sealed in db.execute(
        "SELECT lookup_id, service_tag, nonce, sealed FROM vault_items"
    ):
        try:
            record = nacl.secret.SecretBox(sealing_key).decrypt(sealed, item_nonce)
        except Exception:
            fail("item failed authentication")
        fields = parse_record(record)
        if fields["kind"] == 3:
            # The settings row (section 14): fixed row ids.
            if keyed_hash(index_key, b"\x07") != lookup_id or keyed_hash(index_key, b"\x08") != service_tag:
                fail("record does not belong to its row")
            continue
        s, a = fields["service"].encode("utf-8"), fields["account"].encode("utf-8")
        if fields["kind"] == 1:
            row_id, tag = b"\x01" + lp(s) + lp(a), b"\x02" + lp(s)
        else:
            row_id, tag = b"\x05" + lp(s) + lp(a) + struct.pack("<Q", fields["number"]), b"\x06" + lp(s) + lp(a)
        if keyed_hash(index_key, row_id) != lookup_id:
            fail("record does not belong to its row")
        if keyed_hash(index_key, tag) != service_tag:
            fail("record does not belong to its service")
        entry = {
            "service": fields["service"], "account": fields["account"], "label": fields["label"],
            "generic": fields["generic"].hex() if fields["generic"] is not None else None,
            "created": fields["created"], "modified": fields["modified"], "secret": fields["secret"].hex(),
        }
        if fields["kind"] == 1:
            items.append(entry)
        else:
            entry.update(version=fields["number"], writer=fields["writer"], archived_by=fields["archived_by"])
            versions.append(entry)
    header = header_bytes(version, vault_id, algorithm, salt, ops, mem, nonce, wrapped, check)
    if wraps is not None:
        header += host_wraps_digest(wraps)
    verify_manifest(db, manifest_key, version, header)
    items.sort(key=lambda item: (item["service"].encode("utf-8"), item["account"].encode("utf-8")))
    for item in items:
        print(json.dumps(item, ensure_ascii=False, sort_keys=True))
    if args.history:
        versions.sort(key=lambda v: (v["service"].encode("utf-8"), v["account"].encode("utf-8"), v["version"]))
        for version_entry in versions:
            print(json.dumps(version_entry, ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()
