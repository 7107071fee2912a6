internal import CSodium
import VaultKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Growable memory for secret bytes on their way in or out of the tool (a passphrase
/// being typed, a secret read from standard input, JSON holding a secret), zeroed with
/// `sodium_memzero` whenever it is grown or released, so no stale copy is left behind
/// the way a growing `Array` or `String` would leave one.
final class SensitiveBuffer {
    private var pointer: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        pointer = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: self.capacity)
    }

    deinit {
        sodium_memzero(pointer, capacity)
        pointer.deallocate()
    }

    /// The bytes written so far; valid until the next mutation.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: pointer, count: count) }

    func append(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, source.count > 0 else { return }
        reserve(source.count)
        (pointer + count).copyMemory(from: base, byteCount: source.count)
        count += source.count
    }

    func append(_ byte: UInt8) {
        withUnsafeBytes(of: byte) { append($0) }
    }

    /// Appends text that is not secret (JSON punctuation, names, dates).
    func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    func removeLast(_ n: Int = 1) {
        precondition(n <= count)
        count -= n
        sodium_memzero(pointer + count, n)
    }

    var last: UInt8? { count > 0 ? bytes[count - 1] : nil }

    /// Reads from `fd` until end of file, at most `limit` bytes.
    ///
    /// - Returns: `false` if more than `limit` bytes were available.
    func readAll(from fd: Int32, limit: Int) throws(CLIError) -> Bool {
        try fill(from: fd, limit: limit, chunk: 64 * 1024, untilNewline: false)
    }

    /// Reads until a newline has arrived or the input ended, returning `true`; or `false`
    /// once more than `limit` bytes came without a newline. Bytes after the newline in
    /// the last read may be kept too.
    func readFirstLine(from fd: Int32, limit: Int) throws(CLIError) -> Bool {
        try fill(from: fd, limit: limit, chunk: 4096, untilNewline: true)
    }

    private func fill(from fd: Int32, limit: Int, chunk: Int, untilNewline: Bool) throws(CLIError) -> Bool {
        while true {
            reserve(chunk)
            let room = min(capacity - count, limit + 1 - count)
            let n = read(fd, pointer + count, room)
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(what: "standard input", errno: errno)
            }
            if n == 0 { return true }
            let start = count
            count += n
            if untilNewline, memchr(pointer + start, Int32(UInt8(ascii: "\n")), n) != nil { return true }
            if count > limit { return false }
        }
    }

    /// A copy of `range` (all bytes by default) in VaultKit's zeroed-on-release memory.
    func secret(_ range: Range<Int>? = nil) -> SecretBytes {
        let range = range ?? 0..<count
        return SecretBytes(count: range.count) { destination in
            if let base = destination.baseAddress, !range.isEmpty {
                base.copyMemory(from: pointer + range.lowerBound, byteCount: range.count)
            }
        }
    }

    /// Makes room for `extra` more bytes.
    private func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        var newCapacity = capacity
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        grown.initializeMemory(as: UInt8.self, repeating: 0, count: newCapacity)
        grown.copyMemory(from: pointer, byteCount: count)
        sodium_memzero(pointer, capacity)
        pointer.deallocate()
        pointer = grown
        capacity = newCapacity
    }
}

extension SecretBytes {
    /// Appends the secret to `buffer` without an intermediate copy.
    func append(to buffer: SensitiveBuffer) {
        withUnsafeBytes { buffer.append($0) }
    }
}
