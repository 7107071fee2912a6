import Foundation

/// Finds an authorization server's metadata from its issuer URL, and keeps it: one fetch per
/// issuer for ``maxAge``, shared by concurrent callers.
///
/// The document is looked for where RFC 8414 puts it
/// (`https://host/.well-known/oauth-authorization-server/<issuer path>`), then where OpenID
/// Connect Discovery 1.0 does (`<issuer>/.well-known/openid-configuration`). It is used only
/// if its `issuer` is the one asked for (a trailing `/` aside): a document naming another
/// issuer is the mix-up RFC 8414 section 3.3 forbids. Issuers must be `https`, or `http` on
/// this machine's loopback (tests, local development).
///
/// ```swift
/// let discovery = AuthorizationServerDiscovery()
/// let metadata = try await discovery.metadata(for: URL(string: "https://auth.example.com")!)
/// let grants = try metadata.grants(client: .basic(clientID: "reporting", secret: secret))
/// ```
public actor AuthorizationServerDiscovery {
    /// The transport the documents are fetched with.
    public nonisolated let transport: any HTTPTransport
    /// How long a fetched document is used before it is fetched again.
    public nonisolated let maxAge: Duration

    private struct Entry {
        var fetch: Task<Result<AuthorizationServerMetadata, DiscoveryError>, Never>
        var started: ContinuousClock.Instant
    }
    private var entries: [String: Entry] = [:]

    public init(transport: any HTTPTransport = URLSessionTransport(), maxAge: Duration = .seconds(3600)) {
        self.transport = transport
        self.maxAge = maxAge
    }

    /// The metadata of `issuer`: the cached document if it is younger than ``maxAge``, else a
    /// new fetch (one for all concurrent callers). Failures are not cached.
    public func metadata(for issuer: URL) async throws(DiscoveryError) -> AuthorizationServerMetadata {
        let key = Self.normalized(issuer.absoluteString)
        if let entry = entries[key], ContinuousClock.now - entry.started < maxAge {
            return try await entry.fetch.value.get()
        }
        let transport = self.transport
        let fetch = Task { await Self.fetch(issuer, transport: transport) }
        entries[key] = Entry(fetch: fetch, started: .now)
        let result = await fetch.value
        if case .failure = result, entries[key]?.fetch == fetch { entries[key] = nil }
        return try result.get()
    }

    static func normalized(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }

    /// The two places a document may be, in order.
    static func documentURLs(for issuer: URL) -> [URL]? {
        guard var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) else { return nil }
        let path = normalized(components.path)
        components.query = nil
        components.fragment = nil
        components.path = "/.well-known/oauth-authorization-server" + path
        let rfc8414 = components.url
        components.path = path + "/.well-known/openid-configuration"
        let openID = components.url
        return [rfc8414, openID].compactMap { $0 }
    }

    static func isAllowed(_ issuer: URL) -> Bool {
        switch issuer.scheme?.lowercased() {
        case "https": return issuer.host != nil
        case "http": return ["127.0.0.1", "::1", "[::1]", "localhost"].contains(issuer.host?.lowercased() ?? "")
        default: return false
        }
    }

    private static func fetch(_ issuer: URL, transport: any HTTPTransport) async -> Result<AuthorizationServerMetadata, DiscoveryError> {
        guard isAllowed(issuer) else { return .failure(.insecureIssuer) }
        guard let locations = documentURLs(for: issuer) else { return .failure(.malformed) }
        for location in locations {
            var request = HTTPRequest(url: location)
            request.setHeader("Accept", "application/json")
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch {
                return .failure(.unreachable())
            }
            switch response.status {
            case 200:
                guard let metadata = AuthorizationServerMetadata(json: response.body) else { return .failure(.malformed) }
                guard normalized(metadata.issuer) == normalized(issuer.absoluteString) else { return .failure(.issuerMismatch) }
                return .success(metadata)
            case 408, 429, 500...599:
                return .failure(.unreachable(httpStatus: response.status))
            default:
                continue   // not there (404 and the like): try the next place
            }
        }
        return .failure(.notFound)
    }
}
