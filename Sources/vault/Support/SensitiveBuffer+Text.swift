extension SensitiveBuffer {
    /// The bytes as text (invalid UTF-8 repaired), for values that are not secret, such as
    /// a server URL or a user name read next to a secret.
    ///
    /// `bytes` is only valid while the buffer lives, and the buffer zeroes itself when
    /// released: the explicit lifetime keeps `String(decoding: buffer.bytes, ...)` from
    /// reading memory after the buffer's last use.
    var text: String {
        withExtendedLifetime(self) { String(decoding: bytes, as: UTF8.self) }
    }

    /// Runs `body` on the bytes while the buffer is guaranteed alive.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) { try body(bytes) }
    }
}
