import VaultTransfer

/// A dotenv-style file for `vault run --env-file`: `NAME=VALUE` lines, where a value of
/// the form `vault://SERVICE/ACCOUNT` names a vault item (as in `op run` or `sops exec-env`)
/// and any other value is passed to the child as it is.
///
/// Blank lines and lines starting with `#` are skipped; `export NAME=VALUE` is accepted; a
/// value wrapped in single or double quotes has them removed (no escapes, no expansion).
/// A file holding only references holds no secret, so it can be committed.
struct EnvironmentFile {
    enum Value: Equatable {
        case plain(String)
        case reference(ItemReference)
    }

    private(set) var entries: [(name: String, value: Value)] = []

    struct SyntaxError: Error {
        let line: Int
        let reason: String
    }

    init(parsing text: String) throws(SyntaxError) {
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            line = line.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count).drop { $0 == " " } }
            guard let equals = line.firstIndex(of: "=") else {
                throw SyntaxError(line: offset + 1, reason: "expected NAME=VALUE")
            }
            let name = String(line[..<equals])
            guard EnvironmentName.isValid(name) else {
                throw SyntaxError(line: offset + 1, reason: "\(Escaping.quoted(name)) is not a variable name")
            }
            var value = Substring(line[line.index(after: equals)...])
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            if ItemReference.isReference(String(value)) {
                do {
                    entries.append((name, .reference(try ItemReference(String(value), requireScheme: true))))
                } catch {
                    throw SyntaxError(line: offset + 1, reason: error.message(for: String(value)))
                }
            } else {
                entries.append((name, .plain(String(value))))
            }
        }
    }
}

/// Environment variable names as POSIX shells accept them.
enum EnvironmentName {
    static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
        return name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
