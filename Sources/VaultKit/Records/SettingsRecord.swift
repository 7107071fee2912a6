/// The plaintext of the vault's settings row (docs/FORMAT.md section 14): sealed like an
/// item, so only a key holder can read or change what it says.
///
///     u8  version = 2
///     u8  kind = 3 (settings)
///     u32 history retention: how many earlier versions each item keeps
struct SettingsRecord: Sendable, Hashable {
    var historyRetention: UInt32

    static let encodedCount = 2 + 4

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        var writer = ByteWriter(buffer)
        writer.write(ItemRecord.version)
        writer.write(RecordKind.settings.rawValue)
        writer.write(historyRetention)
        precondition(writer.offset == buffer.count, "record size miscomputed")
    }

    init(historyRetention: UInt32) {
        self.historyRetention = historyRetention
    }

    init(decoding plaintext: UnsafeRawBufferPointer) throws(VaultError) {
        do {
            var reader = ByteReader(plaintext)
            guard try reader.readByte() == ItemRecord.version else { throw VaultError.tampered(reason: .unknownItemRecordVersion) }
            guard try reader.readByte() == RecordKind.settings.rawValue else { throw VaultError.tampered(reason: .recordNotOfRow) }
            historyRetention = try reader.readUInt32()
            guard reader.isAtEnd else { throw VaultError.tampered(reason: .malformedItemRecord) }
        } catch let error as VaultError {
            throw error
        } catch {
            throw .tampered(reason: .malformedItemRecord)
        }
    }
}
