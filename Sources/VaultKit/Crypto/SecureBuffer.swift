internal import CSodium
import Synchronization

/// Heap memory for secret bytes that is wiped with `sodium_memzero` when released, and
/// whenever it grows (the old allocation is wiped before it is freed).
///
/// Keys are additionally locked into RAM (`sodium_mlock`) so they are not written to
/// swap; locking is best effort, since unprivileged processes have a small
/// `RLIMIT_MEMLOCK`, and a failure to lock is not an error.
///
/// The bytes are reached only inside closures (``withBytes(_:)``,
/// ``withMutableBytes(_:)``), so no pointer outlives the buffer or a reallocation.
/// The contents change only while the buffer is being built, or through
/// ``SecretBytes``, which mutates a buffer only when it holds the sole reference;
/// that is what makes the `@unchecked Sendable` sound.
final class SecureBuffer: @unchecked Sendable {
    private var start: UnsafeMutableRawPointer
    /// The bytes allocated (all zero beyond `count`).
    private(set) var capacity: Int
    /// The bytes in use.
    private(set) var count: Int
    private let lockInMemory: Bool
    private var isLocked: Bool

    /// Allocates `count` zeroed bytes, with room for at least `capacity` without growing.
    init(count: Int, capacity: Int = 0, lockInMemory: Bool = false) {
        precondition(count >= 0 && capacity >= 0)
        self.count = count
        self.capacity = max(count, capacity)
        self.lockInMemory = lockInMemory
        (start, isLocked) = Self.allocate(self.capacity, lock: lockInMemory)
    }

    /// Copies `bytes` into a new buffer.
    convenience init(copying bytes: UnsafeRawBufferPointer, capacity: Int = 0, lockInMemory: Bool = false) {
        self.init(count: bytes.count, capacity: capacity, lockInMemory: lockInMemory)
        if let base = bytes.baseAddress, bytes.count > 0 {
            start.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Allocates `count` bytes and lets `body` write them before the buffer is shared.
    convenience init<Failure: Error>(count: Int, lockInMemory: Bool = false, initializingWith body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void) throws(Failure) {
        self.init(count: count, lockInMemory: lockInMemory)
        try withMutableBytes(body)
    }

    /// Calls `body` with the bytes, keeping the buffer alive (and unzeroed) until it returns.
    ///
    /// The explicit lifetime matters: Swift may release a buffer right after its last
    /// use, so a pointer taken from a temporary could dangle before a copy is made.
    /// The pointer is valid (non-nil) even for an empty buffer, which C calls need.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Calls `body` with the bytes to write them: only while the buffer is being built
    /// or is held by one owner (see the type's documentation).
    func withMutableBytes<Result, Failure: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeMutableRawBufferPointer(start: start, count: count))
    }

    /// A new buffer holding a copy of `range` of this one, with room for `capacity` bytes.
    func copy(_ range: Range<Int>, capacity: Int = 0) -> SecureBuffer {
        withBytes { SecureBuffer(copying: UnsafeRawBufferPointer(rebasing: $0[range]), capacity: capacity, lockInMemory: lockInMemory) }
    }

    /// Makes room for `minimumCapacity` bytes: a new allocation receives the bytes in
    /// use, and the old one is wiped and freed, so growing leaves no stale copy behind
    /// (as a growing `Array` would).
    func reserve(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        let (grown, grownIsLocked) = Self.allocate(minimumCapacity, lock: lockInMemory)
        grown.copyMemory(from: start, byteCount: count)
        Self.release(start, capacity: capacity, isLocked: isLocked)
        (start, capacity, isLocked) = (grown, minimumCapacity, grownIsLocked)
    }

    /// Lets `body` write up to `maxCount` bytes after the bytes in use, and keeps the
    /// number it returns: for reading straight into protected memory.
    func append<Failure: Error>(maxCount: Int, writingWith body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Int) throws(Failure) -> Int {
        precondition(maxCount >= 0)
        reserve(count + maxCount)
        let written = try body(UnsafeMutableRawBufferPointer(start: start + count, count: maxCount))
        precondition((0...maxCount).contains(written), "wrote more bytes than there was room for")
        count += written
        return written
    }

    /// Drops the last `n` bytes in use, wiping them.
    func removeLast(_ n: Int) {
        precondition(n >= 0 && n <= count)
        count -= n
        sodium_memzero(start + count, n)
    }

    deinit {
        Self.release(start, capacity: capacity, isLocked: isLocked)
    }

    /// `capacity` zeroed bytes (at least one, so the pointer is valid for empty secrets),
    /// locked in RAM when asked and allowed.
    private static func allocate(_ capacity: Int, lock: Bool) -> (UnsafeMutableRawPointer, isLocked: Bool) {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(capacity, 1))
        return (pointer, lock && capacity > 0 && sodium_mlock(pointer, capacity) == 0)
    }

    /// Wipes (and unlocks) an allocation, then frees it.
    private static func release(_ pointer: UnsafeMutableRawPointer, capacity: Int, isLocked: Bool) {
        if isLocked {
            sodium_munlock(pointer, capacity) // zeroes, then unlocks
        } else {
            sodium_memzero(pointer, max(capacity, 1))
        }
        #if DEBUG
        releaseObserver.withLock { $0 }?(UnsafeRawBufferPointer(start: pointer, count: capacity))
        #endif
        pointer.deallocate()
    }

    #if DEBUG
    /// Test hook: sees each allocation's memory after it was wiped and before it is
    /// freed (on release and when a buffer grows), so a test can prove the wipe
    /// happened. Debug builds only.
    static let releaseObserver = Mutex<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)
    #endif
}
