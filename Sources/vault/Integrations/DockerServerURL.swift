/// A registry address as Docker's credential helpers read it (docker-credential-helpers'
/// `registryurl.Parse`): `https://` when no scheme is given, only http and https, a host
/// required, the query dropped. Items are matched on the normalized form, strictly: a
/// different scheme, host, port or path is a different item.
struct DockerServerURL {
    /// `scheme://host[:port][/path]`, with scheme and host in lower case.
    let normalized: String

    enum ParseError: Error, Equatable {
        case unsupportedScheme(String)
        case noHostname

        /// The message upstream's helpers print.
        var message: String {
            switch self {
            case .unsupportedScheme(let scheme): "unsupported scheme: \(scheme)"
            case .noHostname: "no hostname in URL"
            }
        }
    }

    init(_ text: String) throws(ParseError) {
        var rest = Substring(text)
        var scheme = "https"
        if let separator = rest.firstRange(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        } else if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
        }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        // As Go's url.Hostname: a trailing :PORT (digits only) is not part of the host,
        // and IPv6 brackets are removed.
        var host = authority
        if let colon = host.lastIndex(of: ":"), host[host.index(after: colon)...].allSatisfy(\.isASCIIDigit) {
            host = host[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .noHostname }
        normalized = scheme + "://" + authority.lowercased() + rest[authorityEnd...]
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
