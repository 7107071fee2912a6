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
import VaultKit

/// What unlocks a vault: a passphrase, or the raw key from a key file.
enum Unlock {
    case passphrase(SecretBytes)
    case key(VaultKey)
}

/// Where passphrases and keys come from, in the documented order of precedence:
/// `--key-file` / `$VAULT_KEY_FILE`, then `$VAULT_PASSPHRASE_FILE`, then
/// `$VAULT_PASSPHRASE`, then a no-echo prompt on the terminal.
enum Credentials {
    /// The passphrase to open a vault, from the environment or the terminal.
    static func passphrase(prompt: String) throws(CLIError) -> SecretBytes {
        if let secret = try fromEnvironment(file: "VAULT_PASSPHRASE_FILE", variable: "VAULT_PASSPHRASE") { return secret }
        guard let typed = try Terminal.readSecret(prompt: prompt, noun: "passphrase") else { throw .noPassphrase }
        return typed
    }

    /// A passphrase for a new vault: from the environment, or typed twice.
    static func newPassphrase(forCreating path: String) throws(CLIError) -> SecretBytes {
        let secret: SecretBytes
        if let fromEnvironment = try fromEnvironment(file: "VAULT_PASSPHRASE_FILE", variable: "VAULT_PASSPHRASE") {
            secret = fromEnvironment
        } else if let typed = try Terminal.readNewSecret(prompt: "New passphrase for \(path): ", confirmation: "Repeat the passphrase: ", noun: "passphrase", what: "passphrases") {
            secret = typed
        } else {
            throw .noPassphrase
        }
        guard !secret.isEmpty else { throw .emptyPassphrase }
        return secret
    }

    /// The replacement passphrase for `vault passwd`.
    static func replacementPassphrase(for path: String) throws(CLIError) -> SecretBytes {
        let secret: SecretBytes
        if let fromEnvironment = try fromEnvironment(file: "VAULT_NEW_PASSPHRASE_FILE", variable: "VAULT_NEW_PASSPHRASE") {
            secret = fromEnvironment
        } else if let typed = try Terminal.readNewSecret(prompt: "New passphrase for \(path): ", confirmation: "Repeat the new passphrase: ", noun: "new passphrase", what: "new passphrases") {
            secret = typed
        } else {
            throw .noNewPassphrase
        }
        guard !secret.isEmpty else { throw .emptyPassphrase }
        return secret
    }

    /// The first line of the file named by `file`, else the value of `variable`, else `nil`.
    /// An empty variable counts as unset, as `${VAR:-...}` does in the shell.
    private static func fromEnvironment(file: String, variable: String) throws(CLIError) -> SecretBytes? {
        if let path = Environment.value(file) {
            return try firstLine(ofFile: path)
        }
        // Copied straight from the environment block: no Swift String holds it.
        guard let value = getenv(variable), value.pointee != 0 else { return nil }
        let count = strlen(value)
        return SecretBytes(count: count) { $0.baseAddress?.copyMemory(from: value, byteCount: count) }
    }

    private static func firstLine(ofFile path: String) throws(CLIError) -> SecretBytes {
        // Only the first line counts, so only it is read (a longer file is fine).
        let contents = try readFile(path, what: "the passphrase file \(path)", limit: 64 * 1024, firstLineOnly: true)
        let end = contents.withUnsafeBytes { bytes in
            let end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            return end > 0 && bytes[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
        }
        guard end > 0 else { throw .emptyPassphraseFile(path: path) }
        return contents.extracting(0..<end)
    }

    // MARK: Key files

    /// The key in a key file: exactly 32 raw bytes.
    static func key(fromFile path: String) throws(CLIError) -> VaultKey {
        let contents = try readFile(path, what: "the key file \(path)", limit: 4096)
        guard contents.count == VaultKey.byteCount, let key = try? VaultKey(contents) else {
            throw .keyFileLength(path: path, count: contents.count)
        }
        return key
    }

    /// The key pair in a host key file (`vault host keygen`): exactly 32 raw bytes of
    /// X25519 private key, checked like a key file.
    static func hostKey(fromFile path: String) throws(CLIError) -> HostKeyPair {
        let contents = try readFile(path, what: "the host key file \(path)", limit: 4096)
        guard contents.count == HostKeyPair.privateKeyByteCount, let pair = try? HostKeyPair(privateKey: contents) else {
            throw .keyFileLength(path: path, count: contents.count)
        }
        return pair
    }

    /// Creates a key file holding a new random key, readable by its owner only.
    /// Fails if anything exists at `path` (`O_EXCL`), so a key is never overwritten.
    static func createKeyFile(at path: String) throws(CLIError) -> VaultKey {
        let key = VaultKey.random()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(what: "the key file \(path)", errno: errno) }
        var failure: CLIError?
        key.withUnsafeBytes { bytes in
            do throws(CLIError) { try Output.write(bytes, to: fd) } catch { failure = error }
        }
        if failure == nil, fsync(fd) != 0 { failure = .cannotWrite(what: "the key file \(path)", errno: errno) }
        close(fd)
        if let failure {
            unlink(path)
            if case .cannotWrite(_, let code) = failure { throw .cannotWrite(what: "the key file \(path)", errno: code) }
            throw failure
        }
        return key
    }

    /// The contents of the secret file at `path` (at most `limit` bytes), checked by
    /// ``SecretFile``'s policy.
    ///
    /// - Parameter allowingPipe: whether a pipe (`/dev/stdin`, `<(...)`) is accepted, as it
    ///   is for keys and passphrases: it holds nothing at rest.
    static func readFile(_ path: String, what: String, limit: Int, firstLineOnly: Bool = false, allowingPipe: Bool = true) throws(CLIError) -> SecretBytes {
        let fd: Int32
        do {
            fd = try SecretFile.open(path, allowingPipe: allowingPipe)
        } catch {
            throw CLIError(error, what: what)
        }
        defer { close(fd) }
        var contents = SecretBytes()
        do throws(CLIError) {
            let complete = firstLineOnly ? try contents.readFirstLine(from: fd, limit: limit) : try contents.readAll(from: fd, limit: limit)
            guard complete else { throw CLIError.cannotRead(what: what, errno: EFBIG) }
        } catch {
            if case .cannotRead(_, let code) = error { throw .cannotRead(what: what, errno: code) }
            throw error
        }
        return contents
    }
}

extension CLIError {
    /// The tool's words for a secret file ``SecretFile`` refused.
    init(_ refusal: SecretFile.Refusal, what: String) {
        switch refusal {
        case .cannotOpen(let code): self = .cannotRead(what: what, errno: code)
        case .notRegular: self = .cannotRead(what: what, errno: EINVAL)
        case .otherOwner(let uid): self = .insecureSecretFile(what: what, mode: nil, owner: uid)
        case .othersCanAccess(let mode): self = .insecureSecretFile(what: what, mode: mode, owner: nil)
        }
    }
}

/// The environment variables the tool reads, with empty values counting as unset.
enum Environment {
    static func value(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}
