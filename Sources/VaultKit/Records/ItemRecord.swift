#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The plaintext of one sealed item: every attribute and the secret, in one record.
///
/// Encoding, version 2 (integers little-endian, `lp` = 4-byte length then bytes; the
/// exact text is docs/FORMAT.md sections 5 and 14):
///
///     u8  version = 2
///     u8  kind: 1 = item, 2 = kept version (3 = settings: ``SettingsRecord``)
///     u64 number (the item's version number, 0 = not yet numbered)
///     lp  writer (UTF-8)
///     u8  operation
///     (kind 2 only:) i64 archived, lp archived-by, u8 archived-because
///     lp  service (UTF-8)
///     lp  account (UTF-8)
///     u8  flags: bit 0 = label present, bit 1 = generic present
///     lp  label (only if bit 0)
///     lp  generic (only if bit 1)
///     i64 created, milliseconds since 1970-01-01 UTC
///     i64 modified, milliseconds since 1970-01-01 UTC
///     lp  secret
///
/// Version 1 is the same from `service` on, with neither kind nor provenance; it is
/// still read (format-3 vaults, and rows a format-4 vault has not rewritten).
///
/// The record is authenticated by the secretbox tag, so a record that fails to parse
/// was produced by a bug or by someone holding the key; both are reported as tampering.
enum ItemRecord {
    static let version: UInt8 = 2
    static let firstVersion: UInt8 = 1
    private static let labelFlag: UInt8 = 0b01
    private static let genericFlag: UInt8 = 0b10

    /// The exact encoded size of a record.
    static func encodedCount(attributes item: VaultItem, secretCount: Int, provenance: RecordProvenance) -> Int {
        var count = 2 + 8 + 4 + provenance.writer.utf8.count + 1
        if let archive = provenance.archive { count += 8 + 4 + archive.writer.utf8.count + 1 }
        count += 4 + item.service.utf8.count + 4 + item.account.utf8.count + 1
        if let label = item.label { count += 4 + label.utf8.count }
        if let generic = item.generic { count += 4 + generic.count }
        return count + 8 + 8 + 4 + secretCount
    }

    /// Writes the record into `buffer`, which is exactly ``encodedCount(attributes:secretCount:provenance:)`` bytes.
    static func encode(attributes item: VaultItem, secret: UnsafeRawBufferPointer, provenance: RecordProvenance, into buffer: UnsafeMutableRawBufferPointer) {
        var writer = ByteWriter(buffer)
        writer.write(version)
        writer.write(provenance.kind.rawValue)
        writer.write(provenance.number)
        writer.writeLengthPrefixed(provenance.writer)
        writer.write(provenance.operation.recordCode)
        if let archive = provenance.archive {
            writer.write(milliseconds(archive.date))
            writer.writeLengthPrefixed(archive.writer)
            writer.write(archive.because.recordCode)
        }
        writer.writeLengthPrefixed(item.service)
        writer.writeLengthPrefixed(item.account)
        writer.write((item.label == nil ? 0 : labelFlag) | (item.generic == nil ? 0 : genericFlag))
        if let label = item.label { writer.writeLengthPrefixed(label) }
        if let generic = item.generic { generic.withUnsafeBytes { writer.writeLengthPrefixed(bytes: $0) } }
        writer.write(milliseconds(item.created))
        writer.write(milliseconds(item.modified))
        writer.writeLengthPrefixed(bytes: secret)
        precondition(writer.offset == buffer.count, "record size miscomputed")
    }

    /// The kind of the record in `plaintext` (a version-1 record is an item), read from
    /// its first bytes; the rest is checked when it is decoded.
    static func kind(of plaintext: UnsafeRawBufferPointer) throws(VaultError) -> RecordKind {
        guard let first = plaintext.first else { throw .tampered(reason: .malformedItemRecord) }
        switch first {
        case firstVersion: return .item
        case version:
            guard plaintext.count > 1, let kind = RecordKind(rawValue: plaintext[1]) else { throw .tampered(reason: .malformedItemRecord) }
            return kind
        default: throw .tampered(reason: .unknownItemRecordVersion)
        }
    }

    /// Reads the attributes and the provenance, and locates the secret inside `plaintext`,
    /// a record of an item or of a kept version (a settings record is refused).
    ///
    /// - Returns: the attributes, the secret's byte range within `plaintext`, and the
    ///   provenance (``RecordProvenance/unrecorded`` for a version-1 record).
    static func decode(_ plaintext: UnsafeRawBufferPointer) throws(VaultError) -> (VaultItem, Range<Int>, RecordProvenance) {
        do {
            var reader = ByteReader(plaintext)
            var provenance = RecordProvenance.unrecorded
            switch try reader.readByte() {
            case firstVersion:
                break
            case version:
                let kind = try reader.readByte()
                guard kind == RecordKind.item.rawValue || kind == RecordKind.version.rawValue else {
                    throw VaultError.tampered(reason: .recordNotOfRow)
                }
                provenance.number = UInt64(bitPattern: try reader.readInt64())
                provenance.writer = try string(reader.readLengthPrefixed())
                provenance.operation = try operation(reader.readByte())
                if kind == RecordKind.version.rawValue {
                    let date = date(try reader.readInt64())
                    let writer = try string(reader.readLengthPrefixed())
                    provenance.archive = .init(date: date, writer: writer, because: try operation(reader.readByte()))
                }
            default:
                throw VaultError.tampered(reason: .unknownItemRecordVersion)
            }
            let service = try string(reader.readLengthPrefixed())
            let account = try string(reader.readLengthPrefixed())
            let flags = try reader.readByte()
            guard flags & ~(labelFlag | genericFlag) == 0 else { throw VaultError.tampered(reason: .malformedItemRecord) }
            let label = flags & labelFlag != 0 ? try string(reader.readLengthPrefixed()) : nil
            let generic = flags & genericFlag != 0 ? Data(try reader.readLengthPrefixed()) : nil
            let created = date(try reader.readInt64())
            let modified = date(try reader.readInt64())
            let secret = try reader.readLengthPrefixed()
            guard reader.isAtEnd else { throw VaultError.tampered(reason: .malformedItemRecord) }
            let start = secret.baseAddress.map { $0 - plaintext.baseAddress! } ?? 0
            let item = VaultItem(service: service, account: account, label: label, generic: generic, created: created, modified: modified)
            return (item, start..<(start + secret.count), provenance)
        } catch let error as VaultError {
            throw error
        } catch {
            throw .tampered(reason: .malformedItemRecord)
        }
    }

    private static func operation(_ code: UInt8) throws(VaultError) -> VaultChange.Operation {
        guard let operation = VaultChange.Operation(recordCode: code) else { throw .tampered(reason: .malformedItemRecord) }
        return operation
    }

    /// Valid UTF-8 as a `String`, else tampering.
    ///
    /// `String(validating:as:)` is not specialised on this toolchain and looked up generic
    /// metadata on every call (~1,000 instructions per record, callgrind). Decoding
    /// replaces each invalid sequence with U+FFFD, so the bytes come back unchanged
    /// exactly when they were valid.
    static func string(_ bytes: UnsafeRawBufferPointer) throws(VaultError) -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        guard sameUTF8(string, bytes) else {
            throw .tampered(reason: .malformedItemRecord)
        }
        return string
    }

    /// Whether `string`'s UTF-8 is exactly `bytes`.
    static func sameUTF8(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var string = string
        return string.withUTF8 { utf8 in
            utf8.count == bytes.count && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
    }

    /// Whether two strings have the same UTF-8 bytes (not Swift's `==`, which treats
    /// canonically equivalent but different byte sequences as equal).
    static func sameUTF8(_ a: String, _ b: String) -> Bool {
        var b = b
        return b.withUTF8 { sameUTF8(a, UnsafeRawBufferPointer($0)) }
    }

    /// The indices of `items` sorted by the UTF-8 bytes of service, then account (as
    /// `memcmp`, a shorter name first when it is a prefix): the order `list` promises.
    ///
    /// Why not `items.sort`: the sort moves its elements n log n times, and each move of
    /// a `VaultItem` copied and released its strings and data, and comparing the
    /// `UTF8View`s went byte by byte through generic code; together over half of listing
    /// 100,000 items (callgrind; Benchmarks/README.md). Here the names are copied once
    /// into one byte buffer and the sort compares spans of it, touching no reference count.
    static func bytewiseOrder(of items: [VaultItem]) -> [Int] {
        var bytes: [UInt8] = []
        var spans: [(service: Range<Int>, account: Range<Int>)] = []
        spans.reserveCapacity(items.count)
        for item in items {
            let service = bytes.count..<(bytes.count + item.service.utf8.count)
            bytes.append(contentsOf: item.service.utf8)
            let account = bytes.count..<(bytes.count + item.account.utf8.count)
            bytes.append(contentsOf: item.account.utf8)
            spans.append((service, account))
        }
        return bytes.withUnsafeBufferPointer { bytes in
            spans.withUnsafeBufferPointer { spans in
                func order(_ a: Range<Int>, _ b: Range<Int>) -> Int {
                    let common = min(a.count, b.count)
                    let result = common == 0 ? 0 : memcmp(bytes.baseAddress! + a.lowerBound, bytes.baseAddress! + b.lowerBound, common)
                    return result != 0 ? Int(result) : a.count - b.count
                }
                return spans.indices.sorted { lhs, rhs in
                    let byService = order(spans[lhs].service, spans[rhs].service)
                    return byService != 0 ? byService < 0 : order(spans[lhs].account, spans[rhs].account) < 0
                }
            }
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        return value.isFinite ? Int64(clamping: Int(exactly: value) ?? (value > 0 ? Int.max : Int.min)) : 0
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
