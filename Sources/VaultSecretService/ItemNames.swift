/// Which vault item (service, account) a Secret Service item is stored as, so that
/// `vault get SERVICE ACCOUNT` finds what `secret-tool store`, Python keyring,
/// git-credential-libsecret or docker-credential-secretservice wrote (docs/CLI.md,
/// "vault secret-service").
///
/// service: the first of the attributes `service`, `server`, `xdg:schema`, `application`
/// that is present and not empty, else `secret-service`.
/// account: the first of `username`, `user`, `account`, `login` that is present, else "".
/// When an item already has those names (two items with the same attributes, which the
/// API allows), the account gets a suffix ` (2)`, ` (3)`, … so each keeps its own secret.
package enum ItemNames {
    package static let serviceAttributes = ["service", "server", "xdg:schema", "application"]
    package static let accountAttributes = ["username", "user", "account", "login"]
    package static let fallbackService = "secret-service"

    package static func preferred(for attributes: [String: String]) -> (service: String, account: String) {
        let service = serviceAttributes.lazy.compactMap { attributes[$0] }.first { !$0.isEmpty } ?? fallbackService
        let account = accountAttributes.lazy.compactMap { attributes[$0] }.first ?? ""
        return (service, account)
    }

    /// The preferred names, or the first suffixed account that `isTaken` does not refuse.
    package static func unused(for attributes: [String: String], isTaken: (String, String) -> Bool) -> (service: String, account: String) {
        let (service, account) = preferred(for: attributes)
        if !isTaken(service, account) { return (service, account) }
        var number = 2
        while isTaken(service, "\(account) (\(number))") { number += 1 }
        return (service, "\(account) (\(number))")
    }
}
