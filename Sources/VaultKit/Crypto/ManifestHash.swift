internal import CSodium

/// A 32-byte manifest value, as four little-endian words: a number modulo 2^256.
///
/// Why addition and not XOR (format 2 used XOR): under XOR two identical terms cancel,
/// so a row stored twice vanished from its bucket's digest and an old row could be
/// smuggled in as a duplicate pair. Under addition modulo 2^256 the same term added
/// twice changes the sum, so the digest counts rows. Four 64-bit words with carries:
/// a handful of instructions and no heap.
package struct ManifestDigest: Equatable, Sendable {
    private var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

    package static let zero = ManifestDigest()

    static func + (lhs: ManifestDigest, rhs: ManifestDigest) -> ManifestDigest {
        var result = lhs
        result += rhs
        return result
    }

    static func - (lhs: ManifestDigest, rhs: ManifestDigest) -> ManifestDigest {
        var result = lhs
        result -= rhs
        return result
    }

    static func += (lhs: inout ManifestDigest, rhs: ManifestDigest) {
        var carry: Bool
        (lhs.w0, carry) = lhs.w0.addingReportingOverflow(rhs.w0)
        lhs.w1 = add(lhs.w1, rhs.w1, carry: &carry)
        lhs.w2 = add(lhs.w2, rhs.w2, carry: &carry)
        (lhs.w3, _) = lhs.w3.addingReportingOverflow(rhs.w3 &+ (carry ? 1 : 0))
    }

    static func -= (lhs: inout ManifestDigest, rhs: ManifestDigest) {
        var borrow: Bool
        (lhs.w0, borrow) = lhs.w0.subtractingReportingOverflow(rhs.w0)
        lhs.w1 = subtract(lhs.w1, rhs.w1, borrow: &borrow)
        lhs.w2 = subtract(lhs.w2, rhs.w2, borrow: &borrow)
        (lhs.w3, _) = lhs.w3.subtractingReportingOverflow(rhs.w3 &+ (borrow ? 1 : 0))
    }

    /// The additive inverse, so a removal can be recorded as an addition.
    static prefix func - (value: ManifestDigest) -> ManifestDigest { .zero - value }

    private static func add(_ a: UInt64, _ b: UInt64, carry: inout Bool) -> UInt64 {
        let (sum, overflow1) = a.addingReportingOverflow(b)
        let (result, overflow2) = sum.addingReportingOverflow(carry ? 1 : 0)
        carry = overflow1 || overflow2
        return result
    }

    private static func subtract(_ a: UInt64, _ b: UInt64, borrow: inout Bool) -> UInt64 {
        let (difference, overflow1) = a.subtractingReportingOverflow(b)
        let (result, overflow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
        borrow = overflow1 || overflow2
        return result
    }

    /// Format 2's combination, kept only to verify a format-2 vault before upgrading it.
    static func ^ (lhs: ManifestDigest, rhs: ManifestDigest) -> ManifestDigest {
        var result = lhs
        result.w0 ^= rhs.w0
        result.w1 ^= rhs.w1
        result.w2 ^= rhs.w2
        result.w3 ^= rhs.w3
        return result
    }
}

/// The keyed hashes behind the vault-wide manifest (docs/FORMAT.md, "Manifest").
///
/// Why a manifest: each sealed record proves *what* it is, but not that it is the
/// *latest* version of its row, nor that a row that should be there still is. The
/// manifest commits to the exact set of rows, so deleting one or putting back an
/// older copy of one is detected.
///
/// Why a sum of keyed hashes: the commitment must change in O(1) per write, whatever
/// the vault's size. Each row contributes `itemTerm`, a PRF output (keyed BLAKE2b under
/// the manifest subkey) of everything that identifies one version of the row; a
/// bucket's digest is the sum (mod 2^256) of its rows' terms, and the root is the sum
/// of `bucketTerm`s. An attacker without the key cannot compute any term, so any other
/// multiset of rows sums to a value unrelated to the stored one. Because observed
/// values can be combined (`R1 + R2 - R3`), the root itself is stored with a tag that
/// only the key holder can make, over the header too.
extension KeyHierarchy {
    /// The term of one row version: `H(0x03 || lookup_id || service_tag || nonce)`.
    /// The nonce is fresh for every write, so it names the version of the row.
    func manifestItemTerm(lookupID: UnsafeRawBufferPointer, serviceTag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) -> ManifestDigest {
        precondition(lookupID.count == 32 && serviceTag.count == 32 && nonce.count == SecretBox.nonceByteCount)
        return withUnsafeTemporaryAllocation(byteCount: 1 + 32 + 32 + SecretBox.nonceByteCount, alignment: 8) { message in
            message[0] = 0x03
            UnsafeMutableRawBufferPointer(rebasing: message[1..<33]).copyMemory(from: lookupID)
            UnsafeMutableRawBufferPointer(rebasing: message[33..<65]).copyMemory(from: serviceTag)
            UnsafeMutableRawBufferPointer(rebasing: message[65...]).copyMemory(from: nonce)
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// The term of one non-empty bucket: `H(0x04 || uint16_le(bucket) || digest)`.
    func manifestBucketTerm(bucket: Int, digest: ManifestDigest) -> ManifestDigest {
        withUnsafeTemporaryAllocation(byteCount: 1 + 2 + 32, alignment: 8) { message in
            message[0] = 0x04
            message[1] = UInt8(truncatingIfNeeded: bucket)
            message[2] = UInt8(truncatingIfNeeded: bucket >> 8)
            digest.withLittleEndianBytes { UnsafeMutableRawBufferPointer(rebasing: message[3...]).copyMemory(from: $0) }
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// The tag stored beside the root: `H(0x06 || header || u64le(generation) || root)`,
    /// where `header` is ``VaultHeader/authenticatedBytes``. It authenticates the header
    /// and the write counter with the root, so no header field (format version, vault id,
    /// KDF settings, key wrapping) nor the generation can be changed, nor a header put
    /// back with an older root, without the master key.
    func manifestRootTag(_ root: ManifestDigest, header: VaultHeader, generation: UInt64) -> ManifestDigest {
        var prefix: [UInt8] = [0x06]
        prefix += header.authenticatedBytes
        withUnsafeBytes(of: generation.littleEndian) { prefix += $0 }
        return withUnsafeTemporaryAllocation(byteCount: prefix.count + 32, alignment: 8) { message in
            prefix.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: message[..<prefix.count]).copyMemory(from: $0) }
            root.withLittleEndianBytes { UnsafeMutableRawBufferPointer(rebasing: message[prefix.count...]).copyMemory(from: $0) }
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// The MAC of a rollback-guard record: `H(0x07 || vault_id || u64le(generation) || root)`.
    func rollbackGuardMAC(vaultID: [UInt8], generation: UInt64, root: ManifestDigest) -> ManifestDigest {
        var message: [UInt8] = [0x07]
        message += vaultID
        withUnsafeBytes(of: generation.littleEndian) { message += $0 }
        message += root.bytes
        return message.withUnsafeBytes { manifestHash($0) }
    }

    /// Format 2's tag, `H(0x05 || root)`: checked only when upgrading a format-2 vault.
    func legacyManifestRootTag(_ root: ManifestDigest) -> ManifestDigest {
        withUnsafeTemporaryAllocation(byteCount: 1 + 32, alignment: 8) { message in
            message[0] = 0x05
            root.withLittleEndianBytes { UnsafeMutableRawBufferPointer(rebasing: message[1...]).copyMemory(from: $0) }
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// Keyed BLAKE2b-256 (`crypto_generichash`) under the manifest subkey.
    private func manifestHash(_ message: UnsafeRawBufferPointer) -> ManifestDigest {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { output in
            manifestKey.withBytes { key in
                _ = crypto_generichash(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count
                )
            }
            return ManifestDigest(bytes: UnsafeRawBufferPointer(output))!
        }
    }
}

extension ManifestDigest {
    /// The digest stored in `bytes`, or `nil` if they are not 32 bytes long.
    /// Bytes are the little-endian encoding of the 256-bit number (FORMAT.md section 6).
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        self.init()
        w0 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        w1 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        w2 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        w3 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    package var bytes: [UInt8] { withLittleEndianBytes { Array($0) } }

    /// The 32 stored bytes, on the stack: hashing a digest needs no heap.
    func withLittleEndianBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let words = (w0.littleEndian, w1.littleEndian, w2.littleEndian, w3.littleEndian)
        return withUnsafeBytes(of: words, body)
    }

    package var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }
}
