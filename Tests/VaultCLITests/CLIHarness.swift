import CSQLite
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One test's vault and a way to run the built `vault` binary against it.
struct CLI {
    static let executable = TestPaths.executable("vault")
    /// The cheapest Argon2id cost, through the documented advanced options.
    static let cheapKDF = ["--kdf-opslimit", "1", "--kdf-memlimit", "8192"]

    let directory: String
    let vaultPath: String
    /// Added to every run's clean environment (no inherited `VAULT_*`).
    var environment: [String: String]

    init(_ label: String = #function, passphrase: String = "correct horse") {
        directory = TestPaths.temporaryDirectory(label)
        vaultPath = directory + "/test.vault"
        environment = ["VAULT_PASSPHRASE": passphrase]
    }

    /// Runs `vault SUBCOMMAND ARGUMENTS... --vault PATH`.
    @discardableResult
    func run(_ arguments: [String], stdin: Data = Data(), env: [String: String] = [:], unset: [String] = [], vault: Bool = true) throws -> ProcessResult {
        var environment = ChildProcess.cleanEnvironment(self.environment.merging(env) { $1 })
        for name in unset { environment.removeValue(forKey: name) }
        return try ChildProcess.run(Self.executable, arguments + (vault ? ["--vault", vaultPath] : []), environment: environment, standardInput: stdin, timeout: .seconds(60))
    }

    func run(_ arguments: String..., stdin: String = "", env: [String: String] = [:]) throws -> ProcessResult {
        try run(arguments, stdin: Data(stdin.utf8), env: env)
    }

    /// `vault init` with the cheap KDF; fails the test unless it succeeds.
    func initVault(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(["init"] + Self.cheapKDF)
        #expect(result.status == 0, "init: \(result.stderr)", sourceLocation: sourceLocation)
    }

    func set(_ service: String, _ account: String, _ secret: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(["set", service, account], stdin: Data((secret + "\n").utf8))
        #expect(result.status == 0, "set: \(result.stderr)", sourceLocation: sourceLocation)
    }
}

extension ProcessResult {
    /// Every failure is exactly one line on standard error, starting with "vault: ".
    var isOneErrorLine: Bool {
        stderr.hasPrefix("vault: ") && stderr.hasSuffix("\n") && stderr.dropLast().firstIndex(of: "\n") == nil
    }
}

/// Flips one byte inside the sealed record of every item, with SQLite's C API (no
/// `sqlite3` program needed), the way an attacker with write access to the file could.
func tamperWithSealedRecords(in path: String) throws {
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db = handle else {
        throw POSIXError(.EIO)
    }
    defer { sqlite3_close_v2(db) }
    var rows: [([UInt8], [UInt8])] = []
    var select: OpaquePointer?
    guard sqlite3_prepare_v2(db, "SELECT lookup_id, sealed FROM vault_items", -1, &select, nil) == SQLITE_OK else { throw POSIXError(.EIO) }
    while sqlite3_step(select) == SQLITE_ROW {
        func blob(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(select, column))
            guard let base = sqlite3_column_blob(select, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: base, count: count))
        }
        rows.append((blob(0), blob(1)))
    }
    sqlite3_finalize(select)
    for (lookupID, var sealed) in rows {
        sealed[sealed.count / 2] ^= 0x01
        var update: OpaquePointer?
        guard sqlite3_prepare_v2(db, "UPDATE vault_items SET sealed = ? WHERE lookup_id = ?", -1, &update, nil) == SQLITE_OK else { throw POSIXError(.EIO) }
        _ = vaultkit_sqlite3_bind_blob_copy(update, 1, sealed, Int32(sealed.count))
        _ = vaultkit_sqlite3_bind_blob_copy(update, 2, lookupID, Int32(lookupID.count))
        let status = sqlite3_step(update)
        sqlite3_finalize(update)
        guard status == SQLITE_DONE else { throw POSIXError(.EIO) }
    }
    #expect(!rows.isEmpty, "nothing to tamper with")
}
