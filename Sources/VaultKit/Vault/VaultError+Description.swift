#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension VaultError: CustomStringConvertible {
    /// The failure in words, built from the code, reason and typed context only (never
    /// from caller text), so it holds no secret; the `vault` CLI prints it.
    public var description: String {
        let path = self.path ?? "?"
        switch code {
        case .wrongPassphrase: return "wrong passphrase or key"
        case .itemNotFound: return "item not found"
        case .duplicateItem: return "item already exists"
        case .versionNotFound: return "no such version of the item"
        case .vaultNotFound: return "no vault at \(path)"
        case .vaultAlreadyExists:
            // A storage engine's location holds vaults, not files (``VaultEngines``).
            return VaultEngines.isEngineURL(path) ? "a vault already exists at \(path)" : "a file already exists at \(path)"
        case .notAVault: return "not a vault: \(path)"
        case .unsupportedFormatVersion: return "unsupported vault format version \(formatVersion ?? 0)"
        case .formatUpgradeRequired:
            return "vault format \(formatVersion ?? 0) cannot be verified; upgrade it explicitly (vault upgrade) if you trust the file as it is"
        case .corrupted: return "vault is corrupted: \(reasonText)"
        case .tampered: return "vault is tampered: \(reasonText)"
        case .rolledBack:
            let (seen, found) = (seenGeneration ?? 0, fileGeneration ?? 0)
            if seen == found {
                return "\(path) is not the state this user last saw at generation \(seen): it was replaced, or lost commits and was written again"
            }
            if found > seen {
                // Only a master key the record has retired makes a later generation rolled back.
                return "\(path) is under a master key this vault has retired (generation \(found), seen \(seen) under a newer key): an earlier state was written back, as a removed host or an old key's holder could"
            }
            // Only a file has a `-wal`; an engine's vault (a URL) lost commits in its own way.
            let lost = VaultEngines.isURL(path) ? "lost commits" : "lost commits from its -wal"
            return "\(path) is older than a state this user has seen (generation \(found), seen \(seen)): it was replaced with an older copy or \(lost)"
        case .rollbackRecordInvalid:
            return "the rollback guard's record \(path) does not authenticate (damaged, replaced, or written under another guard key); it is not taken as missing"
        case .io: return "\(path): \(String(cString: strerror(self.errno ?? 0)))"
        case .invalidArgument: return "invalid argument: \(reasonText)"
        case .busy: return "vault is locked by another process for too long: \(path)"
        case .insecurePermissions:
            let mode = self.mode ?? 0
            if (mode & 0o170000) == 0o040000 && mode & 0o1000 != 0 {
                // A shared directory such as /tmp: making it private is not the user's to do.
                return "refusing the vault's directory \(path): permissions \(String(mode & 0o7777, radix: 8)) make it a shared directory others can create files in; keep the vault in a directory of your own (mkdir -m 700 DIR)"
            } else if (mode & 0o170000) == 0o040000 {
                return "refusing the vault's directory \(path): permissions \(String(mode & 0o7777, radix: 8)) let group or others write it (chmod go-w, or move the vault)"
            } else if mode & 0o022 == 0 {
                return "refusing \(path): permissions \(String(mode & 0o777, radix: 8)) allow more than the vault file does"
            }
            return "refusing \(path): permissions \(String(mode & 0o777, radix: 8)) let group or others write it (chmod 600)"
        case .untrustedOwner: return "refusing \(path): it belongs to another user (uid \(uid ?? 0))"
        case .symbolicLink: return "refusing \(path): it is a symbolic link; use the file's real path"
        case .keyChanged: return "another process changed the vault's keys, and the passphrase or key this process opened it with does not open it now; open it again with the current one"
        case .closed: return "the vault is closed"
        case .batchEnded: return "a VaultBatch can only be used inside its batch closure, on the closure's thread"
        case .reentrantCall: return "the vault was called from inside its own batch closure; use the VaultBatch instead"
        case .secretNotUTF8: return "the secret is not valid UTF-8 text"
        case .cryptoUnavailable: return "libsodium could not be initialised"
        case .keyDerivationFailed: return "not enough memory for the passphrase key derivation"
        case .valueNotEncodable: return "the value could not be encoded"
        case .valueNotDecodable: return "the stored secret is not a value of the requested type"
        case .unsupportedValueEncoding: return "unsupported value encoding version \(formatVersion ?? 0)"
        case .cancelled: return "the task was cancelled before the vault call started; nothing was done"
        default: return "vault error \(code)"
        }
    }

    /// The reason in words, with its typed detail: what the CLI prints for a refused
    /// argument.
    public var reasonText: String {
        guard let reason else { return code.description }
        switch reason {
        case .keyLength: return "\(reason), not \(byteCount ?? 0)"
        default: return reason.description
        }
    }
}
