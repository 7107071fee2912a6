#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The host of a login's URL as a browser finds it (the WHATWG URL standard), which is
/// the site the saved password is for.
///
/// Why not `URLComponents`: it follows RFC 3986, and browsers do not. For `http`, `https`,
/// `ws`, `wss` and `ftp` a browser reads a backslash as a slash, so in
/// `https://evil.example\@github.com/` it sees host `evil.example` and a path
/// `/@github.com/`, where an RFC reader sees user info `evil.example\` and host
/// `github.com`. An import must name the item after the site the browser would send the
/// password to.
enum BrowserURLHost {
    /// Schemes whose URLs browsers parse with the special rules (backslash as slash).
    private static let specialSchemes: Set<String> = ["http", "https", "ws", "wss", "ftp"]

    /// Code points a host may not hold (WHATWG's forbidden host code points, and `%` once
    /// decoded): such a URL gives no host, as it gives a browser none.
    private static let forbidden: Set<Character> = ["\0", "\t", "\n", "\r", " ", "#", "/", ":", "<", ">", "?", "@", "[", "\\", "]", "^", "|", "%"]

    /// The lowercased host of `url` (without port or user info); a URL without a scheme is
    /// read as https; `nil` when there is no host, as in a bare app identifier.
    static func host(of url: String) -> String? {
        let trimmed = url.trimmingWhitespace()
        var (special, rest) = (true, Substring(trimmed))
        if let colon = trimmed.firstIndex(of: ":"), isScheme(trimmed[..<colon]) {
            let scheme = trimmed[..<colon].lowercased()
            let afterColon = trimmed[trimmed.index(after: colon)...]
            if specialSchemes.contains(scheme) {
                rest = afterColon
            } else if afterColon.hasPrefix("//") {
                (special, rest) = (false, afterColon.dropFirst(2))
            } else if afterColon.first?.isASCII != true || afterColon.first?.isNumber != true {
                return nil  // mailto:, a URN: no host. (A digit after the colon is a port: "localhost:8080".)
            }
        }
        if special { rest = rest.drop { $0 == "/" || $0 == "\\" } }
        let authority = rest.prefix { !($0 == "/" || $0 == "?" || $0 == "#" || (special && $0 == "\\")) }
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        let host: Substring
        if hostAndPort.first == "[" {
            guard let close = hostAndPort.firstIndex(of: "]") else { return nil }
            host = hostAndPort[...close]
            return host.count > 2 ? host.lowercased() : nil
        } else {
            host = hostAndPort.prefix { $0 != ":" }
        }
        guard !host.isEmpty, let decoded = percentDecoded(host), !decoded.isEmpty else { return nil }
        guard !decoded.contains(where: { forbidden.contains($0) || $0.unicodeScalars.contains { Escaping.isUnsafe($0) } }) else { return nil }
        return decoded.lowercased()
    }

    /// `text` with each `%XX` replaced by its byte, or `nil` if that is not UTF-8 (or a
    /// `%` starts no such escape).
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `text` is a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)) }
    }
}
