import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultAgent
import VaultKit

/// The options every subcommand accepts: which vault, and what unlocks it.
struct VaultOptions: ParsableArguments {
    @Option(
        name: .customLong("vault"),
        help: ArgumentHelp(
            "The vault file, or the URL of a vault in a database\(HelpText.urlExamples). Default: $VAULT_PATH, else $VAULT_URL, else ${XDG_DATA_HOME:-$HOME/.local/share}/vault/default.vault.",
            valueName: "path|url"
        )
    )
    var vaultPath: String?

    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "Unlock with the raw 32-byte key in this file instead of a passphrase. Default: $VAULT_KEY_FILE.",
            valueName: "path"
        )
    )
    var keyFileOption: String?

    @Option(
        name: .customLong("host-key"),
        help: ArgumentHelp(
            "Unlock with this host's private key file (vault host keygen) instead. Default: $VAULT_HOST_KEY_FILE.",
            valueName: "path"
        )
    )
    var hostKeyFileOption: String?

    func validate() throws {
        if vaultPath?.isEmpty == true { throw ValidationError("--vault needs a non-empty path") }
        if keyFileOption?.isEmpty == true { throw ValidationError("--key-file needs a non-empty path") }
        if hostKeyFileOption?.isEmpty == true { throw ValidationError("--host-key needs a non-empty path") }
        if keyFileOption != nil && hostKeyFileOption != nil { throw ValidationError("use either --key-file or --host-key, not both") }
    }

    /// The vault, following the documented order.
    func location() throws(CLIError) -> VaultLocation {
        try Self.location(given: vaultPath)
    }

    /// The vault for `--vault` given as `vaultPath` (or not given): `--vault`, else
    /// `$VAULT_PATH`, else `$VAULT_URL`, else the default file. Each may be a file path or
    /// a registered engine's URL; `$VAULT_URL` lets a shell keep a vault in a database as
    /// its default while `$VAULT_PATH` or `--vault` still pick a file.
    static func location(given vaultPath: String?) throws(CLIError) -> VaultLocation {
        if let vaultPath { return try .parse(vaultPath, from: "--vault") }
        if let path = Environment.value("VAULT_PATH") { return try .parse(path, from: "$VAULT_PATH") }
        if let url = Environment.value("VAULT_URL") { return try .parse(url, from: "$VAULT_URL") }
        return try .file(defaultPath())
    }

    /// The default vault file, in the user's data directory.
    private static func defaultPath() throws(CLIError) -> String {
        if let dataHome = Environment.value("XDG_DATA_HOME") { return dataHome + "/vault/default.vault" }
        if let home = Environment.value("HOME") { return home + "/.local/share/vault/default.vault" }
        throw .noHomeDirectory
    }

    /// The key file to use, if any: `--key-file`, else `$VAULT_KEY_FILE`.
    var keyFile: String? { keyFileOption ?? (hostKeyFileOption == nil ? Environment.value("VAULT_KEY_FILE") : nil) }

    /// The host key file to use when no key file is: `--host-key`, else `$VAULT_HOST_KEY_FILE`.
    var hostKeyFile: String? { hostKeyFileOption ?? Environment.value("VAULT_HOST_KEY_FILE") }

    /// Opens the existing vault with the key file, or the passphrase from the
    /// environment or the terminal.
    @Flag(
        name: .customLong("accept-rollback"),
        help: "Accept the vault as it is although it is older than a state of it seen before (a backup restored on purpose)."
    )
    var acceptRollback = false

    /// - Parameter upgradingFormatOne: open a format-1 vault too (`vault upgrade`).
    func openVault(upgradingFormatOne: Bool = false) throws -> Vault {
        try Self.openVault(location(), keyFile: keyFile, hostKeyFile: hostKeyFile, upgradingFormatOne: upgradingFormatOne, acceptingRollback: acceptRollback)
    }

    /// ``openVault(upgradingFormatOne:)`` for a location and key file found without the
    /// parser (``FastPath``).
    static func openVault(_ location: VaultLocation, keyFile: String?, hostKeyFile: String? = nil, upgradingFormatOne: Bool = false, acceptingRollback: Bool = false) throws -> Vault {
        switch location {
        case .file(let path):
            try openVault(at: path, keyFile: keyFile, hostKeyFile: hostKeyFile, upgradingFormatOne: upgradingFormatOne, acceptingRollback: acceptingRollback)
        case .engine(let location, _):
            // Never format 1 (vaults at URLs began at a later format): upgrading is opening.
            try openVault(location, keyFile: keyFile, hostKeyFile: hostKeyFile, acceptingRollback: acceptingRollback)
        }
    }

    private static func openVault(_ location: any VaultEngineLocation, keyFile: String?, hostKeyFile: String?, acceptingRollback: Bool) throws -> Vault {
        let vault: Vault
        if let keyFile {
            let key = try Credentials.key(fromFile: keyFile)
            vault = try Vault.open(location.storage(busyTimeout: Vault.defaultBusyTimeout), key: key)
        } else if let hostKeyFile {
            let (hostKey, identities) = (try Credentials.hostKey(fromFile: hostKeyFile), try HostPins.read(forKeyFile: hostKeyFile))
            vault = try Vault.open(location.storage(busyTimeout: Vault.defaultBusyTimeout), hostKey: hostKey, identities: identities)
        } else {
            let passphrase = try Credentials.passphrase(prompt: "Passphrase for \(location): ")
            vault = try Vault.open(location.storage(busyTimeout: Vault.defaultBusyTimeout), passphrase: passphrase)
        }
        try declareWriter(on: vault, hostKey: keyFile == nil && hostKeyFile != nil)
        try Self.rollbackGuard(vault, accepting: acceptingRollback)
        return vault
    }

    private static func openVault(at path: String, keyFile: String?, hostKeyFile: String?, upgradingFormatOne: Bool, acceptingRollback: Bool) throws -> Vault {
        // Before asking for a passphrase that could not be used anyway.
        if access(path, F_OK) != 0 && errno == ENOENT { throw VaultError.vaultNotFound(path: path) }
        let vault: Vault
        if let keyFile {
            let key = try Credentials.key(fromFile: keyFile)
            vault = upgradingFormatOne ? try Vault.upgrade(at: path, key: key) : try Vault.open(at: path, key: key)
        } else if let hostKeyFile {
            vault = try Vault.open(at: path, hostKey: Credentials.hostKey(fromFile: hostKeyFile), identities: HostPins.read(forKeyFile: hostKeyFile))
        } else {
            let passphrase = try Credentials.passphrase(prompt: "Passphrase for \(path): ")
            vault = upgradingFormatOne ? try Vault.upgrade(at: path, passphrase: passphrase) : try Vault.open(at: path, passphrase: passphrase)
        }
        try declareWriter(on: vault, hostKey: keyFile == nil && hostKeyFile != nil)
        try Self.rollbackGuard(vault, accepting: acceptingRollback)
        return vault
    }

    /// The writer name this command's writes record (`$VAULT_WRITER`), else `nil` for the
    /// library's default, `user@machine`. Ignored for a vault a host key opened, which
    /// records its host's name (docs/CLI.md, "Item history").
    static var declaredWriter: String? { Environment.value("VAULT_WRITER") }

    /// Declares ``declaredWriter`` on a vault opened here (not one a host key opened).
    private static func declareWriter(on vault: Vault, hostKey: Bool) throws(VaultError) {
        guard !hostKey, let writer = declaredWriter else { return }
        try vault.declareWriter(writer)
    }

    /// The CLI checks every vault it opens against the user's rollback records
    /// (`$XDG_STATE_HOME/vaultkit/rollback`), unless `VAULT_ROLLBACK_GUARD=off`. Reads do
    /// not depend on the records being writable; writes do (``RollbackGuardNotice``).
    static func rollbackGuard(_ vault: Vault, accepting: Bool) throws(VaultError) {
        guard Environment.value("VAULT_ROLLBACK_GUARD") != "off", let rollbackGuard = RollbackGuard.userStateDirectory else { return }
        if let unrecordable = try vault.useRollbackGuardReadingWhereUnwritable(rollbackGuard, acceptingCurrentState: accepting) {
            RollbackGuardNotice.remember(unrecordable, directory: rollbackGuard.directory, vaultPath: vault.location.description)
        }
    }

    /// The vault held by the agent when it has unlocked this one (docs/AGENT.md), else
    /// the vault opened here, as ``openVault(upgradingFormatOne:)`` does.
    func openItems() throws -> any ItemStore {
        try Self.openItems(location(), keyFile: keyFile, hostKeyFile: hostKeyFile, acceptingRollback: acceptRollback)
    }

    /// ``openItems()`` for a location and key files found without the parser (``FastPath``).
    static func openItems(_ location: VaultLocation, keyFile: String?, hostKeyFile: String?, acceptingRollback: Bool = false) throws -> any ItemStore {
        let openHere = { try openVault(location, keyFile: keyFile, hostKeyFile: hostKeyFile, acceptingRollback: acceptingRollback) }
        return try AgentVault.ifHeld(location, openHere: openHere) ?? openHere()
    }
}

/// The two arguments that name an item, or a file that holds them.
///
/// Why a file: the command line of every process is readable by every user of the
/// machine (`/proc/PID/cmdline`, `ps`), which would undo the encryption of names.
struct ItemArguments: ParsableArguments {
    @Argument(help: "What the secret is for, for example api.example.com.")
    var service: String?

    @Argument(help: "Whose secret it is within the service, for example alice.")
    var account: String?

    @Option(
        name: .customLong("names-from"),
        help: ArgumentHelp(
            "Read the service (first line) and account (second line) from this file instead of the command line, so they do not show in the process list; '-' is standard input (not with a secret on standard input).",
            valueName: "path"
        )
    )
    var namesFile: String?

    func validate() throws {
        if namesFile != nil {
            if service != nil || account != nil { throw ValidationError("give the service and account either as arguments or with --names-from, not both") }
        } else {
            guard let service else { throw ValidationError("missing the service and account (or --names-from)") }
            if service.isEmpty { throw ValidationError("the service must not be empty") }
            if account == nil { throw ValidationError("missing the account") }
        }
    }

    /// The item's service and account, from the arguments or the names file.
    func names() throws -> (service: String, account: String) {
        if let service, let account { return (service, account) }
        let (service, account) = try NamesInput.read(from: namesFile ?? "-", accountRequired: true)
        return (service, account ?? "")
    }

    /// Runs `body` with the item's names, naming the item in "not found" and "already
    /// exists" errors.
    func run<Result>(_ body: (_ service: String, _ account: String) throws -> Result) throws -> Result {
        let (service, account) = try names()
        return try Self.naming(service: service, account: account) { try body(service, account) }
    }

    /// Runs `body`, naming the item `service`, `account` in "not found" and "already
    /// exists" errors (for ``FastPath`` too, which has the names without the parser).
    static func naming<Result>(service: String, account: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch VaultError.itemNotFound {
            throw CLIError.itemNotFound(service: service, account: account)
        } catch VaultError.duplicateItem {
            throw CLIError.itemExists(service: service, account: account)
        }
    }
}

/// Argon2id cost for a new passphrase (`vault init`, `vault passwd`).
struct KDFOptions: ParsableArguments {
    enum Preset: String, ExpressibleByArgument, CaseIterable {
        case interactive, moderate, sensitive
    }

    @Option(help: "Argon2id cost: interactive (64 MiB), moderate (256 MiB, the default) or sensitive (1 GiB).")
    var kdf: Preset?

    @Option(
        name: .customLong("kdf-opslimit"),
        help: ArgumentHelp("Advanced: Argon2id passes (1-16), instead of --kdf; needs --kdf-memlimit.", valueName: "n")
    )
    var opsLimit: UInt64?

    @Option(
        name: .customLong("kdf-memlimit"),
        help: ArgumentHelp("Advanced: Argon2id memory in bytes (8192 to 2 GiB), instead of --kdf; needs --kdf-opslimit.", valueName: "bytes")
    )
    var memoryLimit: Int?

    var isGiven: Bool { kdf != nil || opsLimit != nil || memoryLimit != nil }

    func validate() throws {
        if (opsLimit == nil) != (memoryLimit == nil) {
            throw ValidationError("--kdf-opslimit and --kdf-memlimit must be given together")
        }
        if kdf != nil && opsLimit != nil {
            throw ValidationError("use either --kdf or --kdf-opslimit with --kdf-memlimit, not both")
        }
        if let opsLimit, let memoryLimit {
            do {
                _ = try KDFParameters(opsLimit: opsLimit, memoryLimit: memoryLimit)
            } catch {
                throw ValidationError(String(describing: error).replacing("invalid argument: ", with: ""))
            }
        }
    }

    func parameters() throws -> KDFParameters {
        if let opsLimit, let memoryLimit { return try KDFParameters(opsLimit: opsLimit, memoryLimit: memoryLimit) }
        switch kdf ?? .moderate {
        case .interactive: return .interactive
        case .moderate: return .moderate
        case .sensitive: return .sensitive
        }
    }
}
