/// The `error` code of an OAuth 2.0 server's answer (RFC 6749 sections 4.1.2.1 and 5.2),
/// such as `invalid_grant`: a machine-readable code, kept only when it looks like one.
///
/// The RFC restricts the code to printable ASCII without `"` and `\`; a value outside
/// that, or longer than 64 characters, is not kept (``init(rawValue:)`` answers `nil`), so
/// whatever else a server sends never reaches an error, a log or a description. The
/// server's free text (`error_description`) is never read.
public struct OAuthErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as the server sent it.
    public let rawValue: String

    /// The code, or `nil` when `rawValue` is not 1 to 64 characters of the RFC's set.
    public init?(rawValue: String) {
        guard !rawValue.isEmpty, rawValue.unicodeScalars.count <= 64,
              rawValue.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" })
        else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) {
        rawValue = known
    }

    // RFC 6749 section 5.2 (token endpoint).
    public static let invalidRequest = OAuthErrorCode(known: "invalid_request")
    public static let invalidClient = OAuthErrorCode(known: "invalid_client")
    /// The credential (refresh token, password, code) is dead: the one refusal of the credential itself.
    public static let invalidGrant = OAuthErrorCode(known: "invalid_grant")
    public static let unauthorizedClient = OAuthErrorCode(known: "unauthorized_client")
    public static let unsupportedGrantType = OAuthErrorCode(known: "unsupported_grant_type")
    public static let invalidScope = OAuthErrorCode(known: "invalid_scope")
    // RFC 6749 section 4.1.2.1 (authorization redirect).
    public static let accessDenied = OAuthErrorCode(known: "access_denied")
    public static let unsupportedResponseType = OAuthErrorCode(known: "unsupported_response_type")
    public static let serverError = OAuthErrorCode(known: "server_error")
    public static let temporarilyUnavailable = OAuthErrorCode(known: "temporarily_unavailable")

    public var description: String { rawValue }
}
