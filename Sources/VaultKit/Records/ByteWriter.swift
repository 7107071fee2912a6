/// Writes little-endian integers and length-prefixed fields into a buffer sized in advance.
///
/// Callers compute the exact size first, so writing never reallocates and secret bytes
/// are never left behind in a grown-and-abandoned buffer.
struct ByteWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    mutating func write(_ byte: UInt8) {
        buffer[offset] = byte
        offset += 1
    }

    mutating func write(_ value: UInt32) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    mutating func write(_ value: UInt64) {
        write(Int64(bitPattern: value))
    }

    mutating func write(_ value: Int64) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Int64.self)
        offset += 8
    }

    mutating func write(bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
        offset += bytes.count
    }

    /// A 4-byte little-endian length, then the bytes.
    mutating func writeLengthPrefixed(bytes: UnsafeRawBufferPointer) {
        write(UInt32(bytes.count))
        write(bytes: bytes)
    }

    mutating func writeLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { writeLengthPrefixed(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// Reads what ``ByteWriter`` wrote, checking every bound.
struct ByteReader {
    struct OutOfBounds: Error {}

    private let buffer: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    var isAtEnd: Bool { offset == buffer.count }

    mutating func readByte() throws(OutOfBounds) -> UInt8 {
        guard offset < buffer.count else { throw OutOfBounds() }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func readUInt32() throws(OutOfBounds) -> UInt32 {
        guard buffer.count - offset >= 4 else { throw OutOfBounds() }
        defer { offset += 4 }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func readInt64() throws(OutOfBounds) -> Int64 {
        guard buffer.count - offset >= 8 else { throw OutOfBounds() }
        defer { offset += 8 }
        return Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    /// A 4-byte little-endian length, then that many bytes, as a slice of the buffer.
    mutating func readLengthPrefixed() throws(OutOfBounds) -> UnsafeRawBufferPointer {
        let count = Int(try readUInt32())
        guard buffer.count - offset >= count else { throw OutOfBounds() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }
}
