internal import CSodium

/// Cryptographically secure random numbers from libsodium, for code that needs
/// randomness (a generated password, an OAuth `state`) without importing libsodium.
public enum SecureRandom {
    /// Throws ``VaultError/cryptoUnavailable`` when libsodium cannot start; call it once
    /// before drawing where that must become an error rather than a stop.
    ///
    /// Drawing itself never returns weak bytes: if the system's random source fails,
    /// libsodium stops the process instead.
    public static func ensureAvailable() throws(VaultError) {
        try Sodium.ensureInitialized()
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        _ = try? Sodium.ensureInitialized()
        Sodium.randomBytes(buffer)
    }

    /// A random number in `0 ..< upperBound`, every value equally likely
    /// (`randombytes_uniform`, which rejects the draws that would favour some values).
    public static func uniform(below upperBound: UInt32) -> UInt32 {
        precondition(upperBound > 0)
        _ = try? Sodium.ensureInitialized()
        return randombytes_uniform(upperBound)
    }
}
