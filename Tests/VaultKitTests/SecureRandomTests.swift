import Testing
import TestTraits
import VaultKit

/// VaultKit's randomness, which the CLI's password generator and other callers use
/// instead of importing libsodium.
@Suite(.offCooperativePool) struct SecureRandomTests {
    @Test func uniformStaysBelowTheBoundAndReachesEveryValue() throws {
        try SecureRandom.ensureAvailable()
        var seen = Set<UInt32>()
        for _ in 0..<2000 {
            let value = SecureRandom.uniform(below: 10)
            #expect(value < 10)
            seen.insert(value)
        }
        // Missing one of ten values in 2000 fair draws has a chance below 1e-90.
        #expect(seen.count == 10)
        #expect(SecureRandom.uniform(below: 1) == 0)
    }

    @Test func fillWritesFreshBytesEachTime() {
        var first = [UInt8](repeating: 0, count: 32)
        var second = [UInt8](repeating: 0, count: 32)
        first.withUnsafeMutableBytes { SecureRandom.fill($0) }
        second.withUnsafeMutableBytes { SecureRandom.fill($0) }
        // Two equal 256-bit draws, or an all-zero one, would mean no randomness at all.
        #expect(first != second)
        #expect(first.contains { $0 != 0 } && second.contains { $0 != 0 })
        SecureRandom.fill(UnsafeMutableRawBufferPointer(start: nil, count: 0))
    }
}
