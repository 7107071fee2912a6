import VaultKit

/// A strict RFC 4180 reader for password-manager exports: comma-separated, fields in
/// double quotes when they hold a comma, quote or line break (a quote doubled inside),
/// records ending in CRLF or LF. Every field is decoded into ``SecretBytes`` because
/// any of them may be a password.
enum CSVReader {
    /// One record: its fields, and the line it starts on (for error messages).
    struct Record {
        var fields: [SecretBytes]
        var line: Int
    }

    /// The records of `bytes`, a UTF-8 byte order mark at the start ignored, blank
    /// lines skipped.
    static func records(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> [Record] {
        var records: [Record] = []
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var field = SecretBytes()
        while index < bytes.count {
            var record = Record(fields: [], line: line)
            var endOfRecord = false
            while !endOfRecord {
                field.removeAll()
                if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
                    index += 1
                    while true {
                        guard index < bytes.count else { throw TransferError("invalid CSV at line \(record.line): a quoted field is not terminated") }
                        let byte = bytes[index]
                        index += 1
                        if byte == UInt8(ascii: "\"") {
                            if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
                                field.append(byte)
                                index += 1
                                continue
                            }
                            break
                        }
                        if byte == UInt8(ascii: "\n") { line += 1 }
                        field.append(byte)
                    }
                } else {
                    while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[index]) {
                        if bytes[index] == UInt8(ascii: "\"") {
                            throw TransferError("invalid CSV at line \(line): a quote inside an unquoted field")
                        }
                        field.append(bytes[index])
                        index += 1
                    }
                }
                record.fields.append(field)
                // After a field: a comma, a line end, or the end of the data.
                if index >= bytes.count {
                    endOfRecord = true
                } else if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "\n") {
                    index += 1
                    line += 1
                    endOfRecord = true
                } else if bytes[index] == UInt8(ascii: "\r"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") {
                    index += 2
                    line += 1
                    endOfRecord = true
                } else {
                    throw TransferError("invalid CSV at line \(line): unexpected character after a field")
                }
            }
            let isBlank = record.fields.count == 1 && record.fields[0].isEmpty
            if !isBlank { records.append(record) }
        }
        return records
    }
}
