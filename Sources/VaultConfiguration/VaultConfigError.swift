public import Configuration
import VaultKit

/// Why a vault item could not be read as the configuration type asked for: a ``Code``,
/// and the key and the type. Names the key and the type, never the value.
///
/// A struct rather than an enum so that a later version can add codes without breaking a
/// client's `switch`: switch over ``code`` with a `default`, or compare a whole error
/// (`#expect(throws: VaultConfigError.valueNotConvertible(key: "port", type: .int))`).
public struct VaultConfigError: Error, CustomStringConvertible, Equatable {
    /// What kind of failure this is.
    public let code: Code
    /// The configuration key whose item failed.
    public let key: String
    /// The type the item was read as.
    public let type: ConfigType

    init(_ code: Code, key: String, type: ConfigType) {
        self.code = code
        self.key = key
        self.type = type
    }

    /// What kind of failure a ``VaultConfigError`` is: a growable set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `VaultConfigError.Code.valueNotConvertible`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The item's secret is not a valid value of the type (see ``VaultConfigProvider`` for the encodings).
        public static let valueNotConvertible = Code(rawValue: "valueNotConvertible")
    }

    /// The item's secret is not a valid value of `type`.
    public static func valueNotConvertible(key: String, type: ConfigType) -> VaultConfigError {
        VaultConfigError(.valueNotConvertible, key: key, type: type)
    }

    public var description: String {
        switch code {
        case .valueNotConvertible: "the vault item for config key '\(key)' is not a valid \(type.rawValue) value"
        default: "vault config error \(code) for key '\(key)'"
        }
    }
}
