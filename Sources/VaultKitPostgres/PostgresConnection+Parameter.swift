internal import CLibPQ

extension PostgresConnection {
    /// A statement parameter, sent in binary with its type named, so no value is ever
    /// spliced into SQL text.
    enum Parameter {
        case bytes([UInt8])
        case text(String)
        case int64(Int64)
        case nullBytes
        case nullInt64
        case nullText
        /// A one-dimensional `bytea[]` without NULLs.
        case byteaArray([[UInt8]])
        /// A one-dimensional `int8[]` without NULLs.
        case int64Array([Int64])

        var typeOID: Oid {
            switch self {
            case .bytes, .nullBytes: 17  // bytea
            case .text, .nullText: 25  // text
            case .int64, .nullInt64: 20  // int8
            case .byteaArray: 1001  // bytea[]
            case .int64Array: 1016  // int8[]
            }
        }

        /// Appends the binary value to `buffer`; `false` for SQL NULL.
        fileprivate func encode(into buffer: inout [UInt8]) -> Bool {
            switch self {
            case .bytes(let bytes): buffer += bytes
            case .text(let text): buffer += text.utf8
            case .int64(let value): withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
            case .byteaArray(let elements):
                // The binary array format: dimensions, a has-NULLs flag, the element type,
                // each dimension's length and lower bound, then each element's length and bytes.
                let header: [Int32] = [1, 0, 17, Int32(elements.count), 1]
                for value in header { Self.append(value, to: &buffer) }
                for element in elements {
                    Self.append(Int32(element.count), to: &buffer)
                    buffer += element
                }
            case .int64Array(let elements):
                let header: [Int32] = [1, 0, 20, Int32(elements.count), 1]
                for value in header { Self.append(value, to: &buffer) }
                for element in elements {
                    Self.append(8, to: &buffer)
                    withUnsafeBytes(of: element.bigEndian) { buffer += $0 }
                }
            case .nullBytes, .nullInt64, .nullText: return false
            }
            return true
        }

        private static func append(_ value: Int32, to buffer: inout [UInt8]) {
            withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
        }
    }

    /// Calls `body` with the parameters in libpq's form: count, values, lengths, formats (binary).
    func withEncoded<Result>(
        _ parameters: [Parameter],
        _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> Result
    ) -> Result {
        // One buffer for every value (never empty, so a zero-length value has an address).
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        for parameter in parameters {
            let start = buffer.count
            let present = parameter.encode(into: &buffer)
            offsets.append(present ? start : nil)
            lengths.append(Int32(buffer.count - start))
        }
        buffer.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        return buffer.withUnsafeBytes { bytes in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { bytes.baseAddress!.advanced(by: $0).assumingMemoryBound(to: CChar.self) }
            }
            return body(Int32(parameters.count), values, lengths, formats)
        }
    }
}
