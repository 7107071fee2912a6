import VaultKit

/// Why an authorization server's metadata could not be used: not found or unreadable, from
/// another issuer, or not offering what the client is configured to use.
///
/// A struct with a growable ``code`` like ``StrategyError``; its description is made from
/// its fields alone (the HTTP status, or the name of the method, grant or endpoint at issue).
public struct DiscoveryError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    /// The HTTP status the server answered, when it is the detail.
    public let httpStatus: Int?
    /// What the client wanted and the server does not list: a client authentication method
    /// (`client_secret_basic`), a PKCE method (`S256`), a grant type, or an endpoint's metadata name.
    public let unsupported: String?

    init(_ code: Code, httpStatus: Int? = nil, unsupported: String? = nil) {
        self.code = code
        self.httpStatus = httpStatus
        self.unsupported = unsupported
    }

    /// What kind of failure a ``DiscoveryError`` is; switch over it with a `default`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The issuer is plain `http` on a host other than this machine's loopback: its
        /// metadata could be rewritten on the way, so it is not fetched.
        public static let insecureIssuer = Code(rawValue: "insecureIssuer")
        /// No answer, or 408, 429, 5xx: might work later.
        public static let unreachable = Code(rawValue: "unreachable")
        /// Neither the RFC 8414 nor the OpenID Connect metadata document exists for the issuer.
        public static let notFound = Code(rawValue: "notFound")
        /// The document is not metadata (not JSON, a required field missing or not a URL).
        public static let malformed = Code(rawValue: "malformed")
        /// The document names another issuer than the one asked for (RFC 8414 section 3.3): not used.
        public static let issuerMismatch = Code(rawValue: "issuerMismatch")
        /// An endpoint the client needs is not in the metadata.
        public static let missingEndpoint = Code(rawValue: "missingEndpoint")
        /// The server does not list the client's authentication method.
        public static let unsupportedClientAuthentication = Code(rawValue: "unsupportedClientAuthentication")
        /// The server does not list PKCE's `S256`.
        public static let unsupportedCodeChallengeMethod = Code(rawValue: "unsupportedCodeChallengeMethod")
        /// The server lists its grant types and the client's is not among them.
        public static let unsupportedGrantType = Code(rawValue: "unsupportedGrantType")
    }

    public static let insecureIssuer = DiscoveryError(.insecureIssuer)
    public static let notFound = DiscoveryError(.notFound)
    public static let malformed = DiscoveryError(.malformed)
    public static let issuerMismatch = DiscoveryError(.issuerMismatch)
    public static func unreachable(httpStatus: Int? = nil) -> DiscoveryError { DiscoveryError(.unreachable, httpStatus: httpStatus) }
    public static func missingEndpoint(_ name: String) -> DiscoveryError { DiscoveryError(.missingEndpoint, unsupported: name) }
    public static func unsupportedClientAuthentication(_ method: String) -> DiscoveryError {
        DiscoveryError(.unsupportedClientAuthentication, unsupported: method)
    }
    public static func unsupportedCodeChallengeMethod(_ method: String) -> DiscoveryError {
        DiscoveryError(.unsupportedCodeChallengeMethod, unsupported: method)
    }
    public static func unsupportedGrantType(_ grant: String) -> DiscoveryError { DiscoveryError(.unsupportedGrantType, unsupported: grant) }

    public var description: String {
        var parts = [code.rawValue]
        if let unsupported { parts.append(unsupported) }
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        return "DiscoveryError(\(parts.joined(separator: ", ")))"
    }
}
