#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// The byte-level encoding of agent messages (docs/AGENT.md): big-endian integers,
/// length-prefixed byte strings, one-byte presence flags for optional values.
///
/// Messages are built in ``SecretBytes`` because a request or response may carry a
/// secret: it is zeroed when released, and when it grows. A class, so the encoders can
/// pass one writer around as they did with a buffer.
package final class WireWriter {
    private(set) var buffer = SecretBytes()

    package func u8(_ value: UInt8) { buffer.append(value) }

    package func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    package func u64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    package func bytes(_ value: UnsafeRawBufferPointer) {
        u32(UInt32(value.count))
        buffer.append(contentsOf: value)
    }

    package func string(_ value: String) {
        var value = value
        value.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    package func optionalString(_ value: String?) {
        guard let value else { u8(0); return }
        u8(1)
        string(value)
    }

    package func optionalData(_ value: Data?) {
        guard let value else { u8(0); return }
        u8(1)
        value.withUnsafeBytes { bytes($0) }
    }

    package func secret(_ value: SecretBytes) {
        value.withUnsafeBytes { bytes($0) }
    }

    package func date(_ value: Date) {
        // The exact bits, so a listing through the agent is the same to the last digit.
        u64(value.timeIntervalSinceReferenceDate.bitPattern)
    }
}
