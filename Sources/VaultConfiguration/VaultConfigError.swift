public import Configuration

/// Why a vault item could not be read as the configuration type asked for. Names the
/// key and the type, never the value.
public enum VaultConfigError: Error, CustomStringConvertible, Equatable {
    /// The item's secret is not a valid value of `type` (see ``VaultConfigProvider`` for the encodings).
    case valueNotConvertible(key: String, type: ConfigType)

    public var description: String {
        switch self {
        case .valueNotConvertible(let key, let type):
            "the vault item for config key '\(key)' is not a valid \(type.rawValue) value"
        }
    }
}
