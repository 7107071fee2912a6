#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The arguments every call checks before anything is sealed, stored or looked up.
extension UnlockedVault {
    /// A longest name, so a record's lengths always fit its 4-byte prefixes with room to spare.
    static let maximumNameByteCount = 64 * 1024
    /// Secrets and generic data: far below SQLite's 1 GB blob limit.
    static let maximumDataByteCount = 64 * 1024 * 1024

    static func validate(service: String, account: String? = nil) throws(VaultError) {
        guard !service.isEmpty else { throw .invalidArgument(.emptyService) }
        guard service.utf8.count <= maximumNameByteCount else { throw .invalidArgument(.serviceTooLong) }
        if let account {
            guard account.utf8.count <= maximumNameByteCount else { throw .invalidArgument(.accountTooLong) }
        }
    }

    /// The checks every write makes before anything is sealed or stored.
    static func validateWrite(secret: SecretBytes, service: String, account: String, generic: Data?) throws(VaultError) {
        try validate(service: service, account: account)
        guard secret.count <= maximumDataByteCount, (generic?.count ?? 0) <= maximumDataByteCount else {
            throw .invalidArgument(.dataTooLarge)
        }
    }
}
