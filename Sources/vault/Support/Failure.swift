import VaultAgent
import VaultKit
import VaultTransfer
import VaultSecretService
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tool's exit statuses; `docs/CLI.md` documents them.
enum ExitStatus {
    static let success: Int32 = 0
    /// Any error not listed below.
    static let failure: Int32 = 1
    /// The command line was wrong.
    static let usage: Int32 = 2
    /// The item does not exist (as macOS `security` reports it).
    static let itemNotFound: Int32 = 44
    /// The item already exists.
    static let itemExists: Int32 = 45
}

/// Errors of the tool itself, on top of ``VaultError``. None carries a secret.
enum CLIError: Error {
    /// A combination of options the parser cannot see, such as one coming from the environment.
    case usage(String)
    case noPassphrase
    case noNewPassphrase
    /// The terminal input ended (Ctrl-D) before anything was typed.
    case inputEnded(noun: String)
    /// A question on the terminal was answered no: nothing was done.
    case cancelled
    case emptyPassphrase
    case mismatch(what: String)
    case cannotRead(what: String, errno: Int32)
    case cannotWrite(what: String, errno: Int32)
    case emptyPassphraseFile(path: String)
    case keyFileLength(path: String, count: Int)
    case secretTooLarge
    case notUTF8ForJSON
    case cannotHarden(errno: Int32)
    case noHomeDirectory
    case itemNotFound(service: String, account: String)
    case itemExists(service: String, account: String)
    /// The item has no kept version of that number (`get --version`, `restore`).
    case versionNotFound(service: String, account: String, version: UInt64)
    /// A name (or any argument) that is not valid UTF-8: refused, never repaired.
    case notUTF8Name(what: String)
    /// A key or passphrase file that others may read, or that belongs to another user.
    case insecureSecretFile(what: String, mode: UInt32?, owner: UInt32?)
    /// `vault run`: the command could not be started (127 if not found, else 126, as shells report it).
    case cannotRun(command: String, errno: Int32)
    /// `vault run`: an environment variable cannot hold a NUL byte.
    case secretHasNUL(variable: String)
    /// A credential helper: the item's `field` holds a newline or NUL, which the protocol
    /// cannot carry (it would inject lines); nothing was written.
    case protocolCannotCarry(protocolName: String, field: String, service: String, account: String)
    /// A host key with no pinned vault identity (`vault host pin`).
    case hostKeyNotPinned(keyFile: String)
    case invalidPinFile(path: String, line: Int)
}

/// The one place where an error becomes a line on standard error and an exit status.
enum Failure {
    static func describe(_ error: any Error) -> (message: String, status: Int32) {
        switch error {
        case let error as CLIError: describe(error)
        case let error as VaultError: describe(error)
        case let error as TransferError: (error.description, ExitStatus.failure)
        case let error as AgentError: (error.message, ExitStatus.failure)
        case let error as ProviderError: (error.description, ExitStatus.failure)
        default: ("unexpected error: \(type(of: error))", ExitStatus.failure)
        }
    }

    private static func describe(_ error: CLIError) -> (String, Int32) {
        switch error {
        case .usage(let message):
            (message, ExitStatus.usage)
        case .noPassphrase:
            ("no passphrase available: set VAULT_PASSPHRASE_FILE or VAULT_PASSPHRASE, use --key-file, or run on a terminal", ExitStatus.failure)
        case .noNewPassphrase:
            ("no new passphrase available: set VAULT_NEW_PASSPHRASE_FILE or VAULT_NEW_PASSPHRASE, or run on a terminal", ExitStatus.failure)
        case .inputEnded(let noun):
            ("no \(noun) given: the terminal input ended", ExitStatus.failure)
        case .cancelled:
            ("cancelled: nothing was changed", ExitStatus.failure)
        case .emptyPassphrase:
            ("refusing an empty passphrase", ExitStatus.failure)
        case .mismatch(let what):
            ("the two \(what) do not match", ExitStatus.failure)
        case .cannotRead(let what, let code):
            ("cannot read \(what): \(systemMessage(code))", ExitStatus.failure)
        case .cannotWrite(let what, let code):
            ("cannot write \(what): \(systemMessage(code))", ExitStatus.failure)
        case .emptyPassphraseFile(let path):
            ("the passphrase file \(path) has an empty first line", ExitStatus.failure)
        case .keyFileLength(let path, let count):
            ("the key file \(path) holds \(count) bytes; a vault key is exactly \(VaultKey.byteCount) raw bytes", ExitStatus.failure)
        case .secretTooLarge:
            ("the secret is larger than 64 MiB", ExitStatus.failure)
        case .notUTF8ForJSON:
            ("the secret is not UTF-8 text, so it cannot be written as JSON; use 'vault get' without --json", ExitStatus.failure)
        case .cannotHarden(let code):
            ("cannot disable core dumps: \(systemMessage(code))", ExitStatus.failure)
        case .noHomeDirectory:
            ("cannot find the vault: no --vault, VAULT_PATH, XDG_DATA_HOME or HOME", ExitStatus.failure)
        case .itemNotFound(let service, let account):
            ("item not found: service \(Escaping.quoted(service)), account \(Escaping.quoted(account))", ExitStatus.itemNotFound)
        case .versionNotFound(let service, let account, let version):
            ("no version \(version) of service \(Escaping.quoted(service)), account \(Escaping.quoted(account)) ('vault history' lists the versions kept)", ExitStatus.itemNotFound)
        case .notUTF8Name(let what):
            ("\(what) is not valid UTF-8; names must be UTF-8 text", ExitStatus.usage)
        case .insecureSecretFile(let what, let mode, let owner):
            if let owner {
                ("refusing \(what): it belongs to another user (uid \(owner))", ExitStatus.failure)
            } else {
                ("refusing \(what): permissions \(String((mode ?? 0) & 0o777, radix: 8)) let group or others read it (chmod 600)", ExitStatus.failure)
            }
        case .itemExists(let service, let account):
            ("item already exists: service \(Escaping.quoted(service)), account \(Escaping.quoted(account))", ExitStatus.itemExists)
        case .cannotRun(let command, let code):
            ("cannot run \(Escaping.quoted(command)): \(systemMessage(code))", code == ENOENT ? 127 : 126)
        case .secretHasNUL(let variable):
            ("the secret for \(variable) contains a NUL byte, which an environment variable cannot hold", ExitStatus.failure)
        case .protocolCannotCarry(let protocolName, let field, let service, let account):
            ("refusing the item for service \(Escaping.quoted(service)), account \(Escaping.quoted(account)): its \(field) holds a newline or NUL, which \(protocolName) cannot carry; nothing was written", ExitStatus.failure)
        case .hostKeyNotPinned(let keyFile):
            ("the host key \(Escaping.quoted(keyFile)) has no pinned vault identity: run 'vault host pin --host-key \(Escaping.terminalSafe(keyFile)) FINGERPRINT' with the fingerprint 'vault host identity' prints where the vault's passphrase or key is", ExitStatus.failure)
        case .invalidPinFile(let path, let line):
            ("the pin file \(Escaping.quoted(path)), line \(line), is not a vault identity (vkid1: and 64 lowercase hexadecimal digits)", ExitStatus.failure)
        }
    }

    private static func describe(_ error: VaultError) -> (String, Int32) {
        let path = error.path ?? "?"
        if let refusal = RollbackGuardNotice.refusal(for: error) { return (refusal, ExitStatus.failure) }
        switch error.code {
        case .wrongPassphrase:
            return ("wrong passphrase or key", ExitStatus.failure)
        case .itemNotFound:
            return ("item not found", ExitStatus.itemNotFound)
        case .duplicateItem:
            return ("item already exists", ExitStatus.itemExists)
        case .vaultNotFound:
            return ("no vault at \(path) (create one with 'vault init')", ExitStatus.failure)
        case .vaultAlreadyExists:
            return (error.description + "; refusing to overwrite it", ExitStatus.failure)
        case .io where error.errno == EPROTO && VaultEngines.isEngineURL(path):
            // A storage engine's code for a TLS connection to a server that could not be
            // verified (StorageError.unavailable).
            return ("\(path): TLS failed: the server's certificate does not verify (check sslrootcert and the host name)", ExitStatus.failure)
        case .io:
            return ("\(path): \(systemMessage(error.errno ?? 0))", ExitStatus.failure)
        case .invalidArgument:
            return (error.reasonText, ExitStatus.failure)
        case .rolledBack where VaultEngines.isEngineURL(path):
            // An engine's older state is rows put back (a dump or snapshot restored), not a file.
            return (error.description + "; if you restored the vault's rows on purpose, accept it once with --accept-rollback", ExitStatus.failure)
        case .rolledBack:
            return (error.description + "; if you restored this file on purpose, accept it once with --accept-rollback", ExitStatus.failure)
        case .rollbackRecordInvalid:
            return (error.description + "; if the vault as it is now is the state you expect, accept it once with --accept-rollback", ExitStatus.failure)
        case .formatUpgradeRequired:
            return ("vault format \(error.formatVersion ?? 0) has no tamper protection; if you trust this file as it is, run 'vault upgrade'", ExitStatus.failure)
        default:
            // VaultKit's descriptions already name the problem and never hold a secret.
            return (error.description, ExitStatus.failure)
        }
    }

    /// `strerror` in lower case, as in "permission denied".
    private static func systemMessage(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// Writes `vault: MESSAGE` as one line to standard error and exits with `status`.
    static func terminate(message: String, status: Int32) -> Never {
        RollbackGuardNotice.discard()
        // Paths and other text from outside may hold terminal controls: show them escaped.
        let line = "vault: " + Escaping.terminalSafe(message.split(whereSeparator: \.isNewline).joined(separator: " ")) + "\n"
        Output.write(line, to: STDERR_FILENO)
        exit(status)
    }
}

/// `exit(3)`, callable where argument-parser's `exit(withError:)` shadows the name.
func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
