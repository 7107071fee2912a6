import VaultKit

/// A hot standby named in a vault URL, for the programs that take a URL and nothing else
/// (the `vault` tool, its agent and `vault secret-service`, `Vault.open(url:)`):
/// `postgres://app@db-primary/app?vaultkit_standby_host=db-replica#secrets`.
///
/// - `vaultkit_standby_host` (required): the standby's host; the user, database,
///   password and every other option are the primary's, as a streaming replica shares
///   them.
/// - `vaultkit_standby_port` (optional): its port, when not the primary's.
/// - `vaultkit_standby_max_staleness_ms` (optional, default 1000): the bound of
///   ``PostgresVaultLocation/readingFromStandby(_:maxStaleness:statistics:)``.
///
/// Why query parameters: a URL has one authority, and the standby differs from the
/// primary in its host alone. libpq refuses parameters it does not know, so these are
/// taken out before it sees the URL.
enum PostgresStandbyURLOptions {
    static let hostKey = "vaultkit_standby_host"
    static let portKey = "vaultkit_standby_port"
    static let stalenessKey = "vaultkit_standby_max_staleness_ms"
    static let defaultStaleness = Duration.milliseconds(1_000)

    /// `url` without the standby's parameters, and the standby they name, if any.
    /// - Throws: `VaultError.invalidArgument(.standbyStalenessNotPositive)` for a bound
    ///   that is not a positive whole number of milliseconds, `.notAConnectionString` for a
    ///   port or bound without a host.
    static func split(_ url: String) throws(VaultError) -> (url: String, standby: (host: String, port: String?, maxStaleness: Duration)?) {
        guard let question = url.firstIndex(of: "?") else { return (url, nil) }
        var kept: [Substring] = []
        var found: [String: String] = [:]
        for pair in url[url.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            let name = pair.prefix { $0 != "=" }
            guard [hostKey, portKey, stalenessKey].contains(String(name)) else {
                kept.append(pair)
                continue
            }
            guard let value = String(pair.dropFirst(name.count + 1)).removingPercentEncoding else { throw .invalidArgument(.notAConnectionString) }
            found[String(name)] = value
        }
        guard !found.isEmpty else { return (url, nil) }
        let stripped = String(url[..<question]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
        guard let host = found[hostKey], !host.isEmpty else { throw .invalidArgument(.notAConnectionString) }
        var maxStaleness = defaultStaleness
        if let text = found[stalenessKey] {
            guard let milliseconds = Int(text), milliseconds > 0 else { throw .invalidArgument(.standbyStalenessNotPositive) }
            maxStaleness = .milliseconds(milliseconds)
        }
        return (stripped, (host, found[portKey], maxStaleness))
    }

    /// The standby's connection string: the primary's options (`values`, as libpq parsed
    /// them) with its host and port, as `key='value'` pairs.
    static func standbyConnection(primary values: [String: String], host: String, port: String?) -> String {
        var options = values
        options["hostaddr"] = nil
        options["host"] = host
        if let port { options["port"] = port }
        return options.sorted { $0.key < $1.key }.map { key, value in
            // libpq's quoting: within single quotes, a backslash escapes the next character.
            var quoted = ""
            for character in value {
                if character == "\\" || character == "'" { quoted.append("\\") }
                quoted.append(character)
            }
            return "\(key)='\(quoted)'"
        }.joined(separator: " ")
    }
}

private extension String {
    /// `%XX` sequences decoded as UTF-8 (`nil`: a malformed one, or bytes that are not UTF-8).
    var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
