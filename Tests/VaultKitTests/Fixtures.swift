import CSQLite
import Foundation
import TestSupport
import VaultKit

/// Builds vaults in fresh temporary directories with cheap key derivation.
enum Fixtures {
    static func vaultPath(_ label: String = #function) -> String {
        TestPaths.temporaryDirectory(label) + "/test.vault"
    }

    static func passphraseVault(_ label: String = #function, passphrase: String = "correct horse") throws -> (Vault, String) {
        let path = vaultPath(label)
        return (try Vault.create(at: path, passphrase: passphrase, kdf: testKDF), path)
    }

    static func keyVault(_ label: String = #function) throws -> (Vault, String, VaultKey) {
        let path = vaultPath(label)
        let key = VaultKey.random()
        return (try Vault.create(at: path, key: key), path, key)
    }

    /// Writes `key` to a 0600 file next to the vault, for child processes.
    static func writeKeyFile(_ key: VaultKey, besides vaultPath: String) -> String {
        let path = vaultPath + ".key"
        let data = key.withUnsafeBytes { Data($0) }
        _ = FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        return path
    }

    static func bytes(of path: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path) ?? Data())
    }

    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    }

    static func mode(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }
}

/// Direct SQL on a vault file, playing the attacker who edits rows behind VaultKit's back.
final class RawDatabase {
    private var handle: OpaquePointer?

    init(_ path: String) {
        sqlite3_open(path, &handle)
    }

    deinit {
        sqlite3_close(handle)
    }

    func execute(_ sql: String) {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            fatalError("SQL failed: \(message)")
        }
    }

    /// The first column of the first row, as an integer.
    func integer(_ sql: String) -> Int64? {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : nil
    }

    /// Rows of blobs, hex-encoded, for a query.
    func rows(_ sql: String) -> [[String]] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                let count = Int(sqlite3_column_bytes(statement, column))
                guard let base = sqlite3_column_blob(statement, column) else { return "" }
                return UnsafeRawBufferPointer(start: base, count: count).map { String(format: "%02x", $0) }.joined()
            })
        }
        return rows
    }
}
