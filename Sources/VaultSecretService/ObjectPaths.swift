/// The object paths the provider serves. The vault is the one collection, also reached
/// through the alias path libsecret uses for "default".
package enum ObjectPaths {
    package static let service = "/org/freedesktop/secrets"
    package static let collection = "/org/freedesktop/secrets/collection/vault"
    package static let defaultAlias = "/org/freedesktop/secrets/aliases/default"
    package static let sessionPrefix = "/org/freedesktop/secrets/session/s"
    package static let noObject = "/"

    package static func item(_ id: Int) -> String { "\(collection)/i\(id)" }
    package static func session(_ id: Int) -> String { "\(sessionPrefix)\(id)" }

    /// The item number in an item's path, or nil.
    package static func itemID(in path: String) -> Int? {
        for prefix in [collection + "/i", defaultAlias + "/i"] where path.hasPrefix(prefix) {
            let digits = path.dropFirst(prefix.count)
            guard let first = digits.first, first != "0", digits.count < 10, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(digits)
        }
        return nil
    }
}

/// What a path names.
enum ServedObject: Equatable {
    case service
    case collection
    case item(Int)
    case session(String)
}
