#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a `Codable` value is laid out in an item's secret (value encoding 1):
///
/// ```
/// vaultkit-value 1 <schema>\n<JSON>
/// ```
///
/// An ASCII header line, `vaultkit-value`, the encoding version, the caller's schema
/// version (a decimal integer, 0 when none was given), a line feed; then the value as
/// JSON from `JSONEncoder` with sorted keys, dates as seconds since 2001-01-01 (a JSON
/// number, lossless for `Date`) and `Data` as Base64. A JSON text never starts with
/// `v`, so a value can be told from JSON written by hand before this encoding existed.
/// A reader meets an unknown version with ``VaultError/unsupportedValueEncoding(version:)``
/// before reading further. The plaintext JSON exists only in the encoder's buffers and
/// in ``SecretBytes``; VaultKit's copies are zeroed.
enum VaultValueEncoding {
    static let version = 1
    private static let magic = Array("vaultkit-value ".utf8)
    private static let space = UInt8(ascii: " ")
    private static let lineFeed = UInt8(ascii: "\n")

    static func encode(_ value: some Encodable, schemaVersion: Int) throws(VaultError) -> SecretBytes {
        try check(schemaVersion)
        var json: Data
        do {
            json = try encoder.encode(value)
        } catch {
            throw .valueNotEncodable
        }
        defer { json.resetBytes(in: 0..<json.count) }
        return json.withUnsafeBytes { wrap(schemaVersion: schemaVersion, json: $0) }
    }

    static func wrap(_ value: VaultEncodedValue) throws(VaultError) -> SecretBytes {
        try check(value.schemaVersion)
        return value.json.withUnsafeBytes { wrap(schemaVersion: value.schemaVersion, json: $0) }
    }

    private static func check(_ schemaVersion: Int) throws(VaultError) {
        guard schemaVersion >= 0 else { throw .invalidArgument(.negativeSchemaVersion) }
    }

    private static func wrap(schemaVersion: Int, json: UnsafeRawBufferPointer) -> SecretBytes {
        let header = Array("vaultkit-value \(version) \(schemaVersion)\n".utf8)
        return SecretBytes(count: header.count + json.count) { buffer in
            buffer.copyBytes(from: header)
            UnsafeMutableRawBufferPointer(rebasing: buffer[header.count...]).copyMemory(from: json)
        }
    }

    static func isEnvelope(_ secret: SecretBytes) -> Bool {
        secret.withUnsafeBytes { $0.starts(with: magic) }
    }

    static func unwrap(_ secret: SecretBytes) throws(VaultError) -> VaultEncodedValue {
        let parsed = secret.withUnsafeBytes { (bytes) -> Result<(Int, Range<Int>), VaultError> in
            guard bytes.starts(with: magic) else { return .failure(.valueNotDecodable) }
            var cursor = magic.count
            guard let version = number(in: bytes, at: &cursor, endingWith: [space, lineFeed]) else {
                return .failure(.valueNotDecodable)
            }
            guard version == Self.version else { return .failure(.unsupportedValueEncoding(version: version)) }
            guard bytes[cursor - 1] == space, let schema = number(in: bytes, at: &cursor, endingWith: [lineFeed]) else {
                return .failure(.valueNotDecodable)
            }
            return .success((schema, cursor..<bytes.count))
        }
        let (schemaVersion, body) = try parsed.get()
        let json = secret.withUnsafeBytes { bytes in
            SecretBytes(count: body.count) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[body])) }
        }
        return VaultEncodedValue(schemaVersion: schemaVersion, json: json)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, json: SecretBytes) throws(VaultError) -> Value {
        let decoded = json.withUnsafeBytes { (bytes) -> Value? in
            // Decoded in place: no unwiped copy of the JSON is made here.
            guard let base = bytes.baseAddress else { return nil }  // empty: no JSON text
            let view = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
            return try? decoder.decode(type, from: view)
        }
        // A decoding error's text can quote the JSON: only its kind is reported.
        guard let decoded else { throw .valueNotDecodable }
        return decoded
    }

    /// A decimal number of at most 18 digits at `cursor`, followed by one of `terminators`;
    /// `cursor` ends after the terminator.
    private static func number(in bytes: UnsafeRawBufferPointer, at cursor: inout Int, endingWith terminators: [UInt8]) -> Int? {
        var value = 0, digits = 0
        while cursor < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]), digits < 18 {
            value = value * 10 + Int(bytes[cursor] - UInt8(ascii: "0"))
            digits += 1
            cursor += 1
        }
        guard digits > 0, cursor < bytes.count, terminators.contains(bytes[cursor]) else { return nil }
        cursor += 1
        return value
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        decoder.dataDecodingStrategy = .base64
        return decoder
    }
}
