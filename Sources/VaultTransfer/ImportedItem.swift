#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// One item read from an import file, before it is written to the vault.
public struct ImportedItem {
    public var service: String
    public var account: String
    public var label: String?
    public var generic: Data?
    /// Zeroed when the last copy is released, as every secret VaultKit holds.
    public var secret: SecretBytes

    public init(service: String, account: String, label: String?, generic: Data?, secret: SecretBytes) {
        self.service = service
        self.account = account
        self.label = label
        self.generic = generic
        self.secret = secret
    }
}
