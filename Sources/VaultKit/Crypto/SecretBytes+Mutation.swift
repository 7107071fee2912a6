/// Building and changing a secret in place. Every change first makes sure this value
/// owns its memory alone (copy-on-write, like `Array`), so a copy handed elsewhere,
/// maybe to another thread, never sees the change.
extension SecretBytes {
    /// Makes room for at least `minimumCapacity` bytes, so appending up to that size
    /// moves the bytes (and wipes the old copy) at most this once.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        makeUnique(minimumCapacity: minimumCapacity)
    }

    /// Appends one byte.
    public mutating func append(_ byte: UInt8) {
        Swift.withUnsafeBytes(of: byte) { append(contentsOf: $0) }
    }

    /// Appends `bytes` (an array, a buffer, a string's `utf8`, `Data`).
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        let appended: Void? = bytes.withContiguousStorageIfAvailable { bytes in
            append(copying: UnsafeRawBufferPointer(bytes))
        }
        if appended == nil {
            var array = Array(bytes)
            array.withUnsafeBytes { append(copying: $0) }
            // The temporary array may hold a secret: wipe it too.
            array.withUnsafeMutableBytes { Sodium.zero($0) }
        }
    }

    /// Appends another secret's bytes without an unprotected copy.
    public mutating func append(contentsOf other: SecretBytes) {
        other.withUnsafeBytes { append(copying: $0) }
    }

    /// Lets `body` write up to `maxCount` bytes at the end, straight into protected
    /// memory (for example `read(2)` from a pipe), and keeps the number it returns.
    ///
    /// - Returns: the number of bytes `body` wrote.
    @discardableResult
    public mutating func append<Failure: Error>(maxCount: Int, writingWith body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Int) throws(Failure) -> Int {
        makeUnique(minimumCapacity: count + maxCount)
        defer { range = 0..<storage.count }
        return try storage.append(maxCount: maxCount, writingWith: body)
    }

    /// Removes (and wipes) the last `n` bytes.
    public mutating func removeLast(_ n: Int = 1) {
        precondition(n >= 0 && n <= count, "cannot remove more bytes than the secret has")
        if isUniqueWhole {
            storage.removeLast(n)
        } else {
            // Shared: keep only what stays, so the removed bytes are not copied at all.
            storage = storage.copy(range.lowerBound..<(range.upperBound - n))
        }
        range = 0..<storage.count
    }

    /// Removes (and wipes) every byte, keeping the memory for reuse.
    public mutating func removeAll() {
        removeLast(count)
    }

    /// Calls `body` with the bytes to change them in place; the pointer must not escape
    /// the closure.
    public mutating func withUnsafeMutableBytes<Result, Failure: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        makeUnique(minimumCapacity: count)
        return try storage.withMutableBytes(body)
    }

    private mutating func append(copying bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        append(maxCount: bytes.count) { destination in
            destination.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
            return bytes.count
        }
    }

    /// Whether this value alone holds `storage` and uses all of it, so it may change it.
    private var isUniqueWhole: Bool {
        mutating get { isKnownUniquelyReferenced(&storage) && range == 0..<storage.count }
    }

    /// Ensures this value alone holds memory for its bytes with room for
    /// `minimumCapacity`, growing at least twofold so appends stay cheap.
    private mutating func makeUnique(minimumCapacity: Int) {
        if !isUniqueWhole {
            storage = storage.copy(range, capacity: minimumCapacity)
            range = 0..<storage.count
        }
        if minimumCapacity > storage.capacity {
            storage.reserve(max(minimumCapacity, storage.capacity * 2))
        }
    }
}
