#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dates as the tool writes them (JSON, the agent's log).
package enum Timestamp {
    /// For example `2026-11-22T17:50:27Z`, always in UTC.
    package static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
