import Foundation
import Testing
import StorageConformance
import TestSupport
@testable import VaultKit

/// The storages the seam's tests run the engine on, each with a way to change rows
/// behind the engine's back as another connection would.
enum SeamBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory
    /// The Redis-like store, reached by its URL through ``VaultEngines`` alone.
    case keyValue

    var testDescription: String { rawValue }

    typealias Fixture = StorageConformance.Fixture

    func makeVault(_ label: String = #function) throws -> Fixture {
        let key = VaultKey.random()
        switch self {
        case .memory:
            let storage = InMemoryStorage()
            return Fixture(
                vault: try Vault.create(in: storage, key: key),
                reopen: { try Vault.open(storage, key: key) },
                rows: { Array(storage.committed.rows.values) },
                replace: { row in storage.tamper { $0.rows[row.lookupID] = row } },
                remove: { id in storage.tamper { $0.rows[id] = nil } }
            )
        case .keyValue:
            VaultEngines.register(.memoryKeyValue)
            let url = "memkv://\(label.filter(\.isLetter))-\(UUID().uuidString)"
            let database = KeyValueServer.shared.database(named: String(url.dropFirst("memkv://".count)))
            return Fixture(
                vault: try Vault.create(url: url, key: key),
                reopen: { try Vault.open(url: url, key: key) },
                rows: {
                    try database.snapshot().values.compactMap { key, value in
                        guard key.hasPrefix(KeyValueLayout.itemPrefix), let id = KeyValueLayout.lookupID(ofItemKey: key) else { return nil }
                        return try KeyValueLayout.decodeRow(id, value)
                    }
                },
                replace: { row in database.exec([KeyValueLayout.itemKey(row.lookupID): KeyValueLayout.encode(row)]) },
                remove: { id in database.exec([KeyValueLayout.itemKey(id): nil]) }
            )
        case .sqlite:
            let path = Fixtures.vaultPath(label + "-" + rawValue)
            let raw = { RawDatabase(path) }
            return Fixture(
                vault: try Vault.create(at: path, key: key),
                reopen: { try Vault.open(at: path, key: key) },
                rows: {
                    raw().rows("SELECT lookup_id, service_tag, nonce, sealed FROM vault_items").map { columns in
                        StoredRow(lookupID: bytes(columns[0]), serviceTag: bytes(columns[1]), nonce: bytes(columns[2]), sealed: bytes(columns[3]))
                    }
                },
                replace: { row in
                    raw().execute("""
                        INSERT OR REPLACE INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES
                        (X'\(hex(row.lookupID))', X'\(hex(row.serviceTag))', X'\(hex(row.nonce))', X'\(hex(row.sealed))')
                        """)
                },
                remove: { id in raw().execute("DELETE FROM vault_items WHERE lookup_id = X'\(hex(id))'") }
            )
        }
    }
}

/// The storages the contract's own checks run on: each needs a second connection, which
/// ``InMemoryStorage`` (one object, no connections) does not have.
enum ContractBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case keyValue

    var testDescription: String { rawValue }

    /// A busy timeout short enough that a held write lock is reported, not waited out.
    static let busyTimeout = Duration.milliseconds(50)

    func makeStorage(_ label: String = #function) throws -> StorageContract.Fixture {
        let key = VaultKey.random()
        switch self {
        case .sqlite:
            let path = Fixtures.vaultPath(label + "-contract")
            try Vault.create(at: path, key: key).close()
            return StorageContract.Fixture { try VaultDatabase.openExisting(path, busyTimeoutMilliseconds: 50) }
        case .keyValue:
            VaultEngines.register(.memoryKeyValue)
            let location = KeyValueLocation(name: "contract-\(label.filter(\.isLetter))-\(UUID().uuidString)")
            try Vault.create(url: location.description, key: key).close()
            return StorageContract.Fixture { try location.storage(busyTimeout: Self.busyTimeout) }
        }
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

private func bytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
