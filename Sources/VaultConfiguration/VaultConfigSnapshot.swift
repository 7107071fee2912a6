import Configuration
import VaultKit

/// The items of the provider's service at one moment, held in memory (each secret in
/// zeroed-on-release memory until a lookup decodes it), so a lookup never touches the file.
struct VaultConfigSnapshot: ConfigSnapshot {
    let providerName: String
    /// Secrets by account, that is by the dotted configuration key.
    let secrets: [String: SecretBytes]

    /// The account a key maps to: its components joined with dots (`http.client.token`).
    static func account(for key: AbsoluteConfigKey) -> String {
        key.components.joined(separator: ".")
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let account = Self.account(for: key)
        guard let secret = secrets[account] else { return LookupResult(encodedKey: account, value: nil) }
        let content = try VaultConfigValueDecoding.content(of: secret, type: type, key: account)
        // Every vault value is a secret: the access logger and descriptions redact it.
        return LookupResult(encodedKey: account, value: ConfigValue(content, isSecret: true))
    }
}
