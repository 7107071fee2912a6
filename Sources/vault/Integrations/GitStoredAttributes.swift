#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a git credential item keeps besides its secret, in the item's generic data as
/// `key=value` lines: when the password expires, and the scheme of a pre-encoded
/// `credential`. Neither is secret (`vault list --json` shows generic data).
struct GitStoredAttributes: Equatable {
    var passwordExpiry: Int64?
    var authtype: String?

    init(passwordExpiry: Int64? = nil, authtype: String? = nil) {
        self.passwordExpiry = passwordExpiry
        self.authtype = authtype
    }

    init(generic: Data?) {
        guard let generic else { return }
        for line in String(decoding: generic, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "password_expiry_utc": passwordExpiry = Int64(parts[1])
            case "authtype": authtype = String(parts[1])
            default: break
            }
        }
    }

    /// `nil` when there is nothing to keep, so plain password items have no generic data.
    var generic: Data? {
        var text = ""
        if let passwordExpiry { text += "password_expiry_utc=\(passwordExpiry)\n" }
        if let authtype { text += "authtype=\(authtype)\n" }
        return text.isEmpty ? nil : Data(text.utf8)
    }

    func isExpired(now: Date = Date()) -> Bool {
        guard let passwordExpiry else { return false }
        return passwordExpiry <= Int64(now.timeIntervalSince1970)
    }
}
