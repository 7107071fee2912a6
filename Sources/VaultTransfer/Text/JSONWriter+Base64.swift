import VaultKit

extension JSONWriter {
    /// Writes `bytes` as a base64 JSON string, encoded straight into the writer's
    /// protected buffer.
    package mutating func base64(_ bytes: UnsafeRawBufferPointer) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var encoded = SecretBytes(reservingCapacity: (bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 { group = group << 8 | UInt32(offset < count ? bytes[index + offset] : 0) }
            for position in 0..<4 {
                let sextet = Int(group >> (18 - 6 * position) & 0x3F)
                encoded.append(position <= count ? alphabet[sextet] : UInt8(ascii: "="))
            }
            index += 3
        }
        encoded.withUnsafeBytes { utf8String($0) }
    }
}
