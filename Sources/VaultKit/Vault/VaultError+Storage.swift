#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension VaultError {
    /// A storage failure as the public error, converted in this one place (by
    /// ``VaultStore``). The reasons are texts users see and tests compare: keep them.
    package init(_ failure: StorageError) {
        switch failure {
        case .busy(let location): self = .busy(path: location)
        case .notAVault(let location): self = .notAVault(path: location)
        case .io(let path, let code): self = .io(path: path, errno: code)
        case .corrupted(let reason): self = .corrupted(reason: reason)
        case .schemaChanged: self = .tampered(reason: "the vault's database schema was changed")
        case .generationMissing: self = .tampered(reason: "the vault's generation is missing")
        case .generationInvalid: self = .tampered(reason: "invalid vault generation")
        case .unsupportedFormatVersion(let version): self = .unsupportedFormatVersion(version)
        case .notFound(let location): self = .vaultNotFound(path: location)
        case .alreadyExists(let location): self = .vaultAlreadyExists(path: location)
        case .unavailable(let location, let reason): self = .io(path: "\(location) (\(reason))", errno: ECONNREFUSED)
        }
    }
}
