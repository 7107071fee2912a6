internal import CSodium

/// A 32-byte manifest value, as four words: XOR (`^`) and equality are all the manifest
/// needs, and on four `UInt64`s they are four instructions each, with no heap. (A
/// `SIMD32<UInt8>` did the same element by element and cost 16% of a first read.)
struct ManifestDigest: Equatable, Sendable {
    private var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

    static let zero = ManifestDigest()

    static func ^ (lhs: ManifestDigest, rhs: ManifestDigest) -> ManifestDigest {
        var result = lhs
        result ^= rhs
        return result
    }

    static func ^= (lhs: inout ManifestDigest, rhs: ManifestDigest) {
        lhs.w0 ^= rhs.w0
        lhs.w1 ^= rhs.w1
        lhs.w2 ^= rhs.w2
        lhs.w3 ^= rhs.w3
    }
}

/// The keyed hashes behind the vault-wide manifest (docs/FORMAT.md, "Manifest").
///
/// Why a manifest: each sealed record proves *what* it is, but not that it is the
/// *latest* version of its row, nor that a row that should be there still is. The
/// manifest commits to the exact set of rows, so deleting one or putting back an
/// older copy of one is detected.
///
/// Why XOR of keyed hashes: the commitment must change in O(1) per write, whatever the
/// vault's size. Each row contributes `itemTerm`, a PRF output (keyed BLAKE2b under the
/// manifest subkey) of everything that identifies one version of the row; a bucket's
/// digest is the XOR of its rows' terms, and the root is the XOR of `bucketTerm`s. An
/// attacker without the key cannot compute any term, so any other set of rows XORs to
/// a value unrelated to the stored one. Because XOR lets observed values be combined,
/// the root itself is stored with `rootTag`, which only the key holder can make.
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
            withUnsafeBytes(of: digest) { UnsafeMutableRawBufferPointer(rebasing: message[3...]).copyMemory(from: $0) }
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// The tag stored beside the root: `H(0x05 || root)`.
    func manifestRootTag(_ root: ManifestDigest) -> ManifestDigest {
        withUnsafeTemporaryAllocation(byteCount: 1 + 32, alignment: 8) { message in
            message[0] = 0x05
            withUnsafeBytes(of: root) { UnsafeMutableRawBufferPointer(rebasing: message[1...]).copyMemory(from: $0) }
            return manifestHash(UnsafeRawBufferPointer(message))
        }
    }

    /// Keyed BLAKE2b-256 (`crypto_generichash`) under the manifest subkey.
    private func manifestHash(_ message: UnsafeRawBufferPointer) -> ManifestDigest {
        var digest = ManifestDigest()
        withUnsafeMutableBytes(of: &digest) { output in
            _ = crypto_generichash(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                manifestKey.pointer.assumingMemoryBound(to: UInt8.self), manifestKey.count
            )
        }
        return digest
    }
}

extension ManifestDigest {
    /// The digest stored in `bytes`, or `nil` if they are not 32 bytes long.
    init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        self.init()
        withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: bytes) }
    }

    var bytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }

    var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }
}
