@testable import VaultKit

/// How ``KeyValueStorage`` lays a vault out in keys, and encodes the values: a key per
/// item row and per manifest bucket, one for each header part. Values are byte strings,
/// fields length-prefixed (u32 little-endian).
enum KeyValueLayout {
    static let header = "header"
    static let manifestRoot = "manifest:root"
    static let manifestTag = "manifest:tag"
    static let generation = "generation"
    static let hostWraps = "hosts"
    static let itemPrefix = "item:"
    static let bucketPrefix = "bucket:"

    static func itemKey(_ lookupID: some Collection<UInt8>) -> String { itemPrefix + hex(lookupID) }
    static func bucketKey(_ bucket: Int64) -> String { bucketPrefix + String(bucket) }

    /// Whether `key` is one this layout defines: anything else makes the schema check fail.
    static func isLayoutKey(_ key: String) -> Bool {
        [header, manifestRoot, manifestTag, generation, hostWraps].contains(key)
            || (key.hasPrefix(itemPrefix) && lookupID(ofItemKey: key) != nil)
            || (key.hasPrefix(bucketPrefix) && Int64(key.dropFirst(bucketPrefix.count)) != nil)
    }

    static func lookupID(ofItemKey key: String) -> [UInt8]? {
        unhex(key.dropFirst(itemPrefix.count))
    }

    // MARK: Values

    static func encode(_ fields: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            withUnsafeBytes(of: UInt32(field.count).littleEndian) { bytes += $0 }
            bytes += field
        }
        return bytes
    }

    /// The fields of `bytes`, or `nil` when they do not parse as `count` fields.
    static func decode(_ bytes: [UInt8], count: Int) -> [[UInt8]]? {
        decode(bytes).flatMap { $0.count == count ? $0 : nil }
    }

    /// The fields of `bytes`, or `nil` when they do not parse as fields.
    static func decode(_ bytes: [UInt8]) -> [[UInt8]]? {
        var fields: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { return nil }
            let length = Int(bytes[offset..<offset + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            offset += 4
            guard bytes.count - offset >= length else { return nil }
            fields.append(Array(bytes[offset..<offset + length]))
            offset += length
        }
        return fields
    }

    static func encode(_ row: StoredRow) -> [UInt8] { encode([row.serviceTag, row.nonce, row.sealed]) }

    static func decodeRow(_ lookupID: [UInt8], _ bytes: [UInt8]) throws(StorageError) -> StoredRow {
        guard let fields = decode(bytes, count: 3) else { throw .corrupted(reason: .invalidItemRowFieldLength) }
        return StoredRow(lookupID: lookupID, serviceTag: fields[0], nonce: fields[1], sealed: fields[2])
    }

    static func encode(_ header: VaultHeader) -> [UInt8] {
        let (kind, salt, ops, memory): (String, [UInt8], UInt64, UInt64) = switch header.keySource {
        case .passphrase(let salt, let parameters): ("argon2id13", salt, parameters.opsLimit, UInt64(parameters.memoryLimit))
        case .rawKey: ("raw", [], 0, 0)
        }
        return encode([
            number(UInt64(header.formatVersion)), header.vaultID, Array(kind.utf8), salt, number(ops), number(memory),
            header.masterKeyNonce, header.wrappedMasterKey, header.masterKeyCheck,
        ])
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(StorageError) -> VaultHeader {
        guard let fields = decode(bytes, count: 9), let version = number(fields[0]), let ops = number(fields[4]), let memory = number(fields[5])
        else { throw .corrupted(reason: .invalidHeaderFieldLength) }
        let keySource: VaultHeader.KeySource
        switch String(decoding: fields[2], as: UTF8.self) {
        case "raw": keySource = .rawKey
        case "argon2id13":
            do {
                keySource = .passphrase(salt: fields[3], parameters: try KDFParameters(opsLimit: ops, memoryLimit: Int(clamping: memory)))
            } catch {
                throw .corrupted(reason: .kdfParametersOutOfBounds)
            }
        default: throw .corrupted(reason: .unknownKDFAlgorithm)
        }
        return VaultHeader(formatVersion: Int(clamping: version), vaultID: fields[1], keySource: keySource, masterKeyNonce: fields[6], wrappedMasterKey: fields[7], masterKeyCheck: fields[8])
    }

    static func encode(_ wraps: [StoredHostWrap]) -> [UInt8] {
        encode(wraps.flatMap { [Array($0.name.utf8), $0.publicKey, $0.sealedMasterKey] })
    }

    static func decodeHostWraps(_ bytes: [UInt8]) throws(StorageError) -> [StoredHostWrap] {
        guard let fields = decode(bytes), fields.count % 3 == 0
        else { throw .corrupted(reason: .invalidHeaderFieldLength) }
        return stride(from: 0, to: fields.count, by: 3).map { index in
            StoredHostWrap(name: String(decoding: fields[index], as: UTF8.self), publicKey: fields[index + 1], sealedMasterKey: fields[index + 2])
        }
    }

    static func number(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    static func number(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    // MARK: Plumbing

    private static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    private static func unhex(_ text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
