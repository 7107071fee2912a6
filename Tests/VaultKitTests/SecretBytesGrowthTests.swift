import Foundation
import Synchronization
import Testing
import TestTraits
@testable import VaultKit

/// `SecretBytes` as a growable value: its contents survive growth, copies are
/// independent, and bytes it removes are wiped.
@Suite(.offCooperativePool) struct SecretBytesGrowthTests {
    @Test func appendingKeepsEveryByteInOrderAcrossGrowth() {
        var secret = SecretBytes(reservingCapacity: 1)
        var expected: [UInt8] = []
        for index in 0..<5000 {
            let byte = UInt8(truncatingIfNeeded: index &* 31 &+ 7)
            if index % 3 == 0 {
                secret.append(byte)
                expected.append(byte)
            } else {
                let run = [byte, byte &+ 1, byte &+ 2]
                secret.append(contentsOf: run)
                expected.append(contentsOf: run)
            }
        }
        #expect(secret.count == expected.count)
        #expect(secret.withUnsafeBytes { Array($0) } == expected)
        #expect(secret.storage.capacity >= expected.count)
    }

    @Test func reserveCapacityMakesRoomOnce() {
        var secret = SecretBytes("abc")
        secret.reserveCapacity(1000)
        #expect(secret.storage.capacity >= 1000)
        let storage = ObjectIdentifier(secret.storage)
        secret.append(contentsOf: [UInt8](repeating: 0x41, count: 997))
        #expect(ObjectIdentifier(secret.storage) == storage)
        #expect(secret.count == 1000)
        #expect(secret.withUnsafeBytes { Array($0.prefix(4)) } == Array("abcA".utf8))
    }

    @Test func aCopyDoesNotSeeLaterChanges() {
        var original = SecretBytes("token")
        let copy = original
        original.append(contentsOf: "-more".utf8)
        original.withUnsafeMutableBytes { $0[0] = UInt8(ascii: "T") }
        #expect(copy.string() == "token")
        #expect(original.string() == "Token-more")
        var other = copy
        other.removeLast(2)
        #expect(other.string() == "tok")
        #expect(copy.string() == "token")
    }

    @Test func appendingAnotherSecretAndExtractingARange() {
        var header = SecretBytes("Bearer ")
        header.append(contentsOf: SecretBytes("abc123"))
        #expect(header.string() == "Bearer abc123")
        #expect(header.extracting(7..<13).string() == "abc123")
        #expect(header.extracting(0..<0).isEmpty)
    }

    @Test func writingInPlaceKeepsOnlyWhatWasWritten() {
        var secret = SecretBytes("ab")
        let written = secret.append(maxCount: 10) { room in
            room.copyBytes(from: Array("xyz".utf8))
            return 3
        }
        #expect(written == 3)
        #expect(secret.string() == "abxyz")
        secret.removeAll()
        #expect(secret.isEmpty && secret.string() == "")
    }

    @Test func typedErrorsFromTheClosureComeBackUnchanged() {
        struct Refused: Error, Equatable {}
        var secret = SecretBytes("x")
        #expect(throws: Refused()) { try secret.withUnsafeBytes { (_) throws(Refused) in throw Refused() } }
        #expect(throws: Refused()) { try secret.append(maxCount: 4) { (_) throws(Refused) -> Int in throw Refused() } }
        #expect(secret.string() == "x")
    }
}

extension MemoryHygieneTests {
    /// Growing moves the bytes to a larger allocation; the old one must be wiped before
    /// it is freed, or every secret built piece by piece would leave copies behind.
    @Test func growingWipesTheOldAllocation() {
        let canary = Array("growth-canary-0123456789".utf8)
        var secret = SecretBytes(reservingCapacity: canary.count)
        secret.append(contentsOf: canary)
        let oldAddress = secret.withUnsafeBytes { Int(bitPattern: $0.baseAddress) }
        let reports = Mutex<[(address: Int, wiped: Bool)]>([])
        SecureBuffer.releaseObserver.withLock { observer in
            observer = { bytes in
                let report = (Int(bitPattern: bytes.baseAddress), !bytes.contains { $0 != 0 })
                reports.withLock { $0.append(report) }
            }
        }
        defer { SecureBuffer.releaseObserver.withLock { $0 = nil } }

        secret.append(contentsOf: [UInt8](repeating: 0x42, count: 4096))

        let old = reports.withLock { $0.filter { $0.address == oldAddress } }
        #expect(!old.isEmpty, "the old allocation was not released while the secret lived on")
        #expect(old.allSatisfy { $0.wiped }, "the old allocation still held secret bytes when freed")
        #expect(secret.withUnsafeBytes { Array($0.prefix(canary.count)) } == canary)
        #expect(secret.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } != oldAddress)
    }

    /// Removed bytes are zeroed in place, not just forgotten.
    @Test func removingBytesWipesThem() {
        var secret = SecretBytes(Array("keep-WIPE".utf8))
        secret.removeLast(5)
        #expect(secret.string() == "keep")
        var roomWasZeroed = false
        secret.append(maxCount: 5) { room in
            // The room after the kept bytes is where the removed ones were.
            roomWasZeroed = room.allSatisfy { $0 == 0 }
            return 0
        }
        #expect(roomWasZeroed)
    }
}
