extension Duration {
    /// Whole milliseconds, rounded toward zero and clamped to `Int`: what SQLite's and a
    /// database server's lock timeouts take. Never traps, however long the duration.
    package var clampedMilliseconds: Int {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAdding) = milliseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        guard !overflowAdding else { return seconds < 0 ? .min : .max }
        return Int(clamping: total)
    }
}
