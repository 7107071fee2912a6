import Testing
import TestTraits
@testable import VaultKit

/// `Duration.clampedMilliseconds`, the one conversion behind every lock timeout.
@Suite(.offCooperativePool) struct DurationMillisecondsTests {
    @Test func roundsTowardZeroAndClampsInsteadOfTrapping() {
        #expect(Duration.seconds(5).clampedMilliseconds == 5000)
        #expect(Duration.microseconds(1999).clampedMilliseconds == 1)
        #expect(Duration.microseconds(-1999).clampedMilliseconds == -1)
        #expect(Duration.zero.clampedMilliseconds == 0)
        // A "wait for ever" timeout: seconds * 1000 overflows Int64.
        #expect(Duration.seconds(Int64.max).clampedMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).clampedMilliseconds == .min)
    }
}
