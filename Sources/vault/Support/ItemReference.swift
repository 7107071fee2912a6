import VaultTransfer

/// An item named as `vault://SERVICE/ACCOUNT` (or, where the scheme is optional,
/// `SERVICE/ACCOUNT`), for `vault read`, `vault run --env` and env files.
///
/// The first unescaped `/` separates the service from the account. A `/` inside a name is
/// written `%2F` and a `%` is written `%25`; any other `%XX` (hex) also decodes to that
/// byte, so `%20` is a space. The service must not be empty; the account may be.
struct ItemReference: Equatable {
    static let scheme = "vault://"

    let service: String
    let account: String

    enum ParseError: Error, Equatable {
        case missingScheme
        case missingSlash
        case emptyService
        case badEscape
        case notUTF8
    }

    /// - Parameter requireScheme: `true` where only `vault://...` marks a reference (env files).
    init(_ text: String, requireScheme: Bool) throws(ParseError) {
        var rest = Substring(text)
        if rest.hasPrefix(Self.scheme) {
            rest = rest.dropFirst(Self.scheme.count)
        } else if requireScheme {
            throw .missingScheme
        }
        guard let slash = rest.firstIndex(of: "/") else { throw .missingSlash }
        service = try Self.decode(rest[..<slash])
        account = try Self.decode(rest[rest.index(after: slash)...])
        guard !service.isEmpty else { throw .emptyService }
    }

    static func isReference(_ text: String) -> Bool { text.hasPrefix(scheme) }

    private static func decode(_ text: Substring) throws(ParseError) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = utf8.popFirst().flatMap(hexValue), let low = utf8.popFirst().flatMap(hexValue) else { throw .badEscape }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension ItemReference.ParseError {
    /// Why `text` is not a reference, for a usage error.
    func message(for text: String) -> String {
        let problem = switch self {
        case .missingScheme: "it does not start with vault://"
        case .missingSlash: "it needs SERVICE/ACCOUNT (write a / inside a name as %2F)"
        case .emptyService: "the service is empty"
        case .badEscape: "a % must be followed by two hex digits (%25 for % itself)"
        case .notUTF8: "its %-escapes do not decode to UTF-8 text"
        }
        return "invalid item reference \(Escaping.quoted(text)): \(problem)"
    }
}
