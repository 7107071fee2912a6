/// The object paths the provider serves. The vault's own collection is `vault`; the
/// others are named from their labels; `aliases/NAME` reaches the collection an alias
/// names (libsecret uses `aliases/default`). An item's path is its collection's, then
/// `/iN`.
package enum ObjectPaths {
    package static let service = "/org/freedesktop/secrets"
    package static let collectionPrefix = "/org/freedesktop/secrets/collection/"
    package static let aliasPrefix = "/org/freedesktop/secrets/aliases/"
    package static let vaultCollectionID = "vault"
    package static let collection = collectionPrefix + vaultCollectionID
    package static let defaultAlias = aliasPrefix + "default"
    package static let sessionPrefix = "/org/freedesktop/secrets/session/s"
    package static let promptPrefix = "/org/freedesktop/secrets/prompt/p"
    package static let noObject = "/"

    package static func collection(_ id: String) -> String { collectionPrefix + id }
    package static func item(_ id: Int, in collectionID: String = vaultCollectionID) -> String { "\(collection(collectionID))/i\(id)" }
    package static func session(_ id: Int) -> String { "\(sessionPrefix)\(id)" }
    package static func prompt(_ id: Int) -> String { "\(promptPrefix)\(id)" }

    /// Whether `name` can be one element of an object path (D-Bus allows `[A-Za-z0-9_]`).
    package static func isPathElement(_ name: some StringProtocol) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// What a path under `collection/` or `aliases/` names: the collection (or alias) and,
    /// for an item's path, its number; nil for any other path.
    package static func parse(_ path: String) -> (name: String, isAlias: Bool, item: Int?)? {
        let isAlias: Bool
        let rest: Substring
        if path.hasPrefix(collectionPrefix) {
            (isAlias, rest) = (false, path.dropFirst(collectionPrefix.count))
        } else if path.hasPrefix(aliasPrefix) {
            (isAlias, rest) = (true, path.dropFirst(aliasPrefix.count))
        } else {
            return nil
        }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard let name = parts.first, isPathElement(name), parts.count <= 2 else { return nil }
        guard parts.count == 2 else { return (String(name), isAlias, nil) }
        let element = parts[1]
        guard element.first == "i" else { return nil }
        let digits = element.dropFirst()
        guard let first = digits.first, first != "0", digits.count < 10, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int(digits) else { return nil }
        return (String(name), isAlias, id)
    }

    /// The item number in an item's path, or nil.
    package static func itemID(in path: String) -> Int? { parse(path)?.item }
}

/// What a path names.
enum ServedObject: Equatable {
    case service
    case collection(String)
    case item(Int)
    case session(String)
    case prompt(Int)
}
