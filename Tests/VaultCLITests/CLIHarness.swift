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

    /// A vault at `directory/test.vault` in a directory the caller made.
    init(inDirectory directory: String, passphrase: String = "correct horse") {
        self.directory = directory
        vaultPath = directory + "/test.vault"
        environment = ["VAULT_PASSPHRASE": passphrase]
    }

    /// Runs `vault SUBCOMMAND ARGUMENTS... --vault PATH`.
    @discardableResult
    func run(_ arguments: [String], stdin: Data = Data(), env: [String: String] = [:], unset: [String] = [], vault: Bool = true) throws -> ProcessResult {
        // Each test's own rollback records, not the user's.
        let state = ["XDG_STATE_HOME": directory + "/state"]
        var environment = ChildProcess.cleanEnvironment(state.merging(self.environment) { $1 }.merging(env) { $1 })
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

/// Writes a file readable by its owner only, as key and passphrase files must be.
func writePrivateFile(_ path: String, _ contents: Data) throws {
    #expect(FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]))
    chmod(path, 0o600)
}

extension ProcessResult {
    /// Every failure is exactly one line on standard error, starting with "vault: ".
    var isOneErrorLine: Bool {
        stderr.hasPrefix("vault: ") && stderr.hasSuffix("\n") && stderr.dropLast().firstIndex(of: "\n") == nil
    }
}

/// Overwrites the sealed record of every item with random bytes of the same length,
/// the way an attacker with write access to the file could.
func tamperWithSealedRecords(in path: String) throws {
    let database = RawDatabase(path)
    #expect(database.integer("SELECT count(*) FROM vault_items") ?? 0 > 0, "nothing to tamper with")
    database.execute("UPDATE vault_items SET sealed = randomblob(length(sealed))")
}

/// Holds the vault's write lock, as another process in a long write would, until `body` returns.
func holdingWriteLock<Result>(on path: String, _ body: () throws -> Result) throws -> Result {
    let database = RawDatabase(path)
    database.execute("BEGIN IMMEDIATE")
    defer { database.execute("ROLLBACK") }
    return try body()
}
