#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Secret bytes (a password, a token, a key) whose memory is zeroed when the last copy is
/// released, and when it grows.
///
/// `SecretBytes` never prints its contents: `description`, `debugDescription` and
/// reflection (`dump`, string interpolation) all show `SecretBytes(redacted)`.
/// Reach the bytes in a scope with ``withUnsafeBytes(_:)`` or
/// ``withUnsafeMutableBytes(_:)``, or convert them when you must hand them to an API
/// that takes a `String` or `Data` (those copies are not zeroed by VaultKit).
///
/// It is a value, like `Array`: copies share memory until one of them changes, and a
/// secret can be built up piece by piece (``append(_:)``, ``append(contentsOf:)-(SecretBytes)``,
/// ``reserveCapacity(_:)``). When it grows, the bytes move to a larger allocation and
/// the old one is wiped before it is freed, so building a secret leaves no stale copy
/// behind the way a growing `Array` or `String` would.
///
/// For example:
///
/// ```swift
/// let token = try vault.secret(service: "api.example.com", account: "alice")
/// try token.withUnsafeBytes { bytes in
///     try send(bytes)       // no copy outlives the closure
/// }
///
/// var header = SecretBytes("Bearer ")
/// header.append(contentsOf: token)
/// ```
public struct SecretBytes: Sendable {
    var storage: SecureBuffer
    /// The bytes of `storage` that are the secret: all of them, or the secret's part of
    /// a decrypted record (see ``init(record:range:)``).
    var range: Range<Int>

    init(storage: SecureBuffer) {
        self.storage = storage
        range = 0..<storage.count
    }

    /// The secret at `range` of a decrypted record. When the secret is most of the record
    /// (a large secret), it is used in place rather than copied, so reading a 64 MiB
    /// secret does not hold two 64 MiB copies at once; a small secret is copied out, so
    /// it does not keep the rest of the record (names, generic data) alive with it.
    init(record: SecureBuffer, range: Range<Int>) {
        if range.count * 2 >= record.count {
            storage = record
            self.range = range
        } else {
            storage = record.copy(range)
            self.range = 0..<range.count
        }
    }

    /// An empty secret with room for `capacity` bytes, to be built with ``append(_:)``.
    public init(reservingCapacity capacity: Int = 0) {
        self.init(storage: SecureBuffer(count: 0, capacity: capacity))
    }

    /// Copies `bytes` into zeroed-on-release memory.
    public init(_ bytes: some Sequence<UInt8>) {
        self.init()
        append(contentsOf: bytes)
    }

    /// Copies the UTF-8 encoding of `string`.
    public init(_ string: String) {
        self.init(string.utf8)
    }

    /// Copies the bytes of `data`.
    public init(_ data: Data) {
        self.init(storage: data.withUnsafeBytes { SecureBuffer(copying: $0) })
    }

    /// Builds a secret of `count` bytes written by `body` directly into protected memory,
    /// so no unprotected copy is ever made.
    public init<Failure: Error>(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void) throws(Failure) {
        self.init(storage: try SecureBuffer(count: count, initializingWith: body))
    }

    /// The number of bytes.
    public var count: Int { range.count }

    /// Whether the secret has no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the secret bytes; the pointer must not escape the closure.
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try storage.withBytes { bytes throws(Failure) in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
    }

    /// A copy of the bytes at `range`, in its own zeroed-on-release memory.
    public func extracting(_ range: Range<Int>) -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        return withUnsafeBytes { SecretBytes(storage: SecureBuffer(copying: UnsafeRawBufferPointer(rebasing: $0[range]))) }
    }

    /// The secret decoded as UTF-8, or `nil` when the bytes are not valid UTF-8.
    ///
    /// The returned `String` is an ordinary, unprotected copy.
    public func string() -> String? {
        withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }

    /// An ordinary, unprotected copy of the secret bytes.
    public func data() -> Data {
        withUnsafeBytes { Data($0) }
    }
}

extension SecretBytes: Equatable {
    /// Compares in constant time for equal lengths, so comparing secrets leaks no timing.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecretBytes(redacted)" }
    public var debugDescription: String { "SecretBytes(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
