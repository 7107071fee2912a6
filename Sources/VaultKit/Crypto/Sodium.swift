internal import CSodium

/// The one place libsodium is initialised.
///
/// `sodium_init()` must run before any other libsodium call; it is idempotent and
/// thread-safe, but its result is remembered here so a failure becomes a thrown
/// ``VaultError/cryptoUnavailable`` at every entry point instead of a crash.
enum Sodium {
    private static let initResult: Int32 = sodium_init()

    static func ensureInitialized() throws(VaultError) {
        if initResult < 0 { throw .cryptoUnavailable }
    }

    /// Fills `buffer` with cryptographically secure random bytes.
    static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    static func randomBytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            randomBytes(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Overwrites memory in a way the compiler may not optimise away.
    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Compares in time that depends only on the length, never on the contents.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        return sodium_memcmp(pa, pb, a.count) == 0
    }
}
