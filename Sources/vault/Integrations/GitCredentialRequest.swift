#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// One message of git's credential-helper protocol (`git help credential`): `key=value`
/// lines up to a blank line or the end of input.
///
/// Values that are secrets (`password`, `oauth_refresh_token`, `credential`) go straight
/// from the input buffer into ``SecretBytes``; no Swift `String` ever holds them. Keys the
/// protocol may add later are ignored, as git requires of helpers.
struct GitCredentialRequest {
    var protocolName: String?
    var host: String?
    var path: String?
    var username: String?
    var password: SecretBytes?
    /// Seconds since the epoch, as git sends it.
    var passwordExpiry: Int64?
    var oauthRefreshToken: SecretBytes?
    /// With `credential`: a pre-encoded `Authorization` value (git 2.46's `authtype` capability).
    var authtype: String?
    var credential: SecretBytes?
    var capabilities: Set<String> = []

    /// Parses `input` (the whole of standard input).
    init(parsing input: SecretBytes) {
        let fields = input.withUnsafeBytes { bytes in
            var fields: [(key: String, valueRange: Range<Int>)] = []
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                var lineEnd = end
                if lineEnd > start && bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                if lineEnd == start { break }  // A blank line ends the message.
                if let equals = bytes[start..<lineEnd].firstIndex(of: UInt8(ascii: "=")) {
                    fields.append((String(decoding: bytes[start..<equals], as: UTF8.self), (equals + 1)..<lineEnd))
                }
                start = end + 1
            }
            return fields
        }
        for (key, valueRange) in fields { assign(key: key, valueRange: valueRange, from: input) }
    }

    private mutating func assign(key: String, valueRange: Range<Int>, from input: SecretBytes) {
        func text() -> String { input.withUnsafeBytes { String(decoding: $0[valueRange], as: UTF8.self) } }
        switch key {
        case "protocol": protocolName = text()
        case "host": host = text()
        case "path": path = text()
        case "username": username = text()
        case "password": password = input.extracting(valueRange)
        case "password_expiry_utc": passwordExpiry = Int64(text())
        case "oauth_refresh_token": oauthRefreshToken = input.extracting(valueRange)
        case "authtype": authtype = text()
        case "credential": credential = input.extracting(valueRange)
        case "capability[]": capabilities.insert(text())
        default: break
        }
    }

    /// Whether git announced it understands `authtype` and `credential`.
    var acceptsAuthtype: Bool { capabilities.contains("authtype") }

    /// `git:<protocol>://<host>[/<path>]`, or `nil` when git sent too little to name an
    /// item (it needs a protocol, and a host or a path, as git's own store helper does).
    var service: String? { Self.service(prefix: "git:", protocolName: protocolName, host: host, path: path) }

    /// The item holding the OAuth refresh token that goes with ``service``.
    var refreshTokenService: String? { Self.service(prefix: "git-refresh-token:", protocolName: protocolName, host: host, path: path) }

    /// The services an `erase` without a path also removes: git treats a missing
    /// attribute as matching any value, so every path under this protocol and host.
    var servicePathPrefixes: [String] {
        guard path == nil, let service, let refreshTokenService else { return [] }
        return [service + "/", refreshTokenService + "/"]
    }

    private static func service(prefix: String, protocolName: String?, host: String?, path: String?) -> String? {
        guard let protocolName, !protocolName.isEmpty, host?.isEmpty == false || path?.isEmpty == false else { return nil }
        var service = prefix + protocolName + "://" + (host ?? "")
        if let path, !path.isEmpty { service += "/" + path }
        return service
    }
}
