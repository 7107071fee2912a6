#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `printf`-style number formatting, which `String(format:)` gave but FoundationEssentials
/// lacks (`vault` does not import Foundation: it would link ICU, Benchmarks/README.md,
/// "The agent"). The C library formats, so the text is exactly what it was.
enum CFormat {
    /// `%.1f`: one digit after the point, rounded as C rounds.
    static func oneDecimal(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 32)
        var length = Int(withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.1f", $0) })
        if length >= buffer.count {
            buffer = [CChar](repeating: 0, count: length + 1)
            length = Int(withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.1f", $0) })
        }
        return String(decoding: buffer.prefix(max(length, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
