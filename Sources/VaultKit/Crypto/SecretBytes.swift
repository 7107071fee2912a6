import Foundation

/// Secret bytes (a password, a token, a key) whose memory is zeroed when the last copy is released.
///
/// `SecretBytes` never prints its contents: `description`, `debugDescription` and
/// reflection (`dump`, string interpolation) all show `SecretBytes(redacted)`.
/// Reach the bytes in a scope with ``withUnsafeBytes(_:)``, or convert them when you
/// must hand them to an API that takes a `String` or `Data` (those copies are not
/// zeroed by VaultKit).
///
/// For example:
///
/// ```swift
/// let token = try vault.secret(service: "api.example.com", account: "alice")
/// try token.withUnsafeBytes { bytes in
///     try send(bytes)       // no copy outlives the closure
/// }
/// ```
public struct SecretBytes: Sendable {
    let storage: SecureBuffer
    /// The bytes of `storage` that are the secret: all of them, or the secret's part of
    /// a decrypted record (see ``init(record:range:)``).
    let range: Range<Int>

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

    /// Copies `bytes` into zeroed-on-release memory.
    public init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        storage = array.withUnsafeBytes { SecureBuffer(copying: $0) }
        range = 0..<storage.count
    }

    /// Copies the UTF-8 encoding of `string`.
    public init(_ string: String) {
        var string = string
        storage = string.withUTF8 { SecureBuffer(copying: UnsafeRawBufferPointer($0)) }
        range = 0..<storage.count
    }

    /// Copies the bytes of `data`.
    public init(_ data: Data) {
        storage = data.withUnsafeBytes { SecureBuffer(copying: $0) }
        range = 0..<storage.count
    }

    /// Builds a secret of `count` bytes written by `body` directly into protected memory,
    /// so no unprotected copy is ever made.
    public init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = try SecureBuffer(count: count, initializingWith: body)
        range = 0..<count
    }

    /// The number of bytes.
    public var count: Int { range.count }

    /// Whether the secret has no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the secret bytes; the pointer must not escape the closure.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withBytes { bytes in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
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
