import VaultKit

/// Helpers the format parsers share for turning file fields into item names.
enum ImportNames {
    /// `bytes` as a name: names must be valid UTF-8, as every other name in a vault is.
    static func text(_ bytes: SecretBytes?, _ what: String, at place: String) throws(TransferError) -> String {
        guard let bytes else { return "" }
        guard let text = bytes.string() else { throw TransferError("\(place): the \(what) is not valid UTF-8") }
        return text
    }

    /// The host of a login's URL, the way a browser would match it ("https://login.example.com/x"
    /// gives "login.example.com"; see ``BrowserURLHost``); a URL without a scheme is read as
    /// https; `nil` if there is no host, as in a bare app identifier.
    static func host(ofURL url: String) -> String? {
        BrowserURLHost.host(of: url)
    }

    /// The service for a login: its URL's host, else `fallback` (a title or item name).
    static func service(url: String, fallback: String, at place: String) throws(TransferError) -> String {
        if let host = host(ofURL: url) { return host }
        if !fallback.isEmpty { return fallback }
        if !url.isEmpty { return url }
        throw TransferError("\(place): neither a URL nor a name to use as the service")
    }
}
