/// FNV-1a over UTF-8: a 64-bit hash that is the same in every process and build (Swift's
/// `Hasher` is seeded per process), for values other sessions must compute alike.
/// Not a security boundary: a collision only makes two locks or snapshots look alike.
enum StableHash {
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }
}
