import VaultKit

/// A JSON value read from an import file. Strings are kept as ``SecretBytes`` (zeroed
/// when released) because any of them may be a password; names are converted to
/// `String` only once they are known not to be secret.
package indirect enum JSONValue {
    case null
    case bool(Bool)
    case number(Double)
    case string(SecretBytes)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// The member named `key` of an object (the last one, as most JSON readers do).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    package var array: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    package var secret: SecretBytes? {
        if case .string(let bytes) = self { return bytes }
        return nil
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
