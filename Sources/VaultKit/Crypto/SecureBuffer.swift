internal import CSodium
import Synchronization

/// Heap memory for secret bytes that is wiped with `sodium_memzero` when released.
///
/// Keys are additionally locked into RAM (`sodium_mlock`) so they are not written to
/// swap; locking is best effort, since unprivileged processes have a small
/// `RLIMIT_MEMLOCK`, and a failure to lock is not an error.
///
/// The contents are written only while the buffer is being built and never after it
/// has been shared, which is what makes the `@unchecked Sendable` sound.
final class SecureBuffer: @unchecked Sendable {
    /// For C calls on a buffer that something else keeps alive (a parameter, a stored
    /// property); otherwise use ``withBytes(_:)``.
    let pointer: UnsafeMutableRawPointer
    let count: Int
    private let isLocked: Bool

    /// Allocates `count` zeroed bytes.
    init(count: Int, lockInMemory: Bool = false) {
        precondition(count >= 0)
        self.count = count
        // Allocating at least one byte keeps `pointer` valid for empty secrets.
        self.pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        self.pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        self.isLocked = lockInMemory && count > 0 && sodium_mlock(pointer, count) == 0
    }

    /// Copies `bytes` into a new buffer.
    convenience init(copying bytes: UnsafeRawBufferPointer, lockInMemory: Bool = false) {
        self.init(count: bytes.count, lockInMemory: lockInMemory)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Allocates `count` bytes and lets `body` write them before the buffer is shared.
    convenience init(count: Int, lockInMemory: Bool = false, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        self.init(count: count, lockInMemory: lockInMemory)
        try body(mutableBytes)
    }

    /// Calls `body` with the bytes, keeping the buffer alive (and unzeroed) until it returns.
    ///
    /// Prefer this to `pointer`: Swift may release a buffer right after its last use,
    /// so a pointer taken from a temporary can dangle before a copy is made.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A new buffer holding a copy of `range` of this one.
    func copy(_ range: Range<Int>) -> SecureBuffer {
        withBytes { SecureBuffer(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Only for use while the buffer is being built, before it is shared.
    private var mutableBytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: pointer, count: count) }

    deinit {
        if isLocked {
            sodium_munlock(pointer, count) // zeroes, then unlocks
        } else {
            sodium_memzero(pointer, max(count, 1))
        }
        #if DEBUG
        Self.releaseObserver.withLock { $0 }?(UnsafeRawBufferPointer(start: pointer, count: count))
        #endif
        pointer.deallocate()
    }

    #if DEBUG
    /// Test hook: sees each buffer's memory after it was wiped and before it is freed,
    /// so a test can prove the wipe happened. Debug builds only.
    static let releaseObserver = Mutex<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)
    #endif
}
