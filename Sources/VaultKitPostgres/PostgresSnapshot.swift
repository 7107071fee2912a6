/// A snapshot as `pg_current_snapshot()` prints it (`xmin:xmax:xip,...`), reduced to what
/// decides which rows it sees: the set of transactions that had completed.
///
/// Why not the text itself: the text also moves when a transaction merely starts writing
/// (`xmax` grows) and it cannot leave out this session's own transaction. Naming the
/// completed set lets a writer tell "nothing but my own commit happened since I took the
/// lock" (the lock's set plus its own transaction id) from any other commit, so what it
/// verified of the manifest stays verified across its own writes, as it does on SQLite.
///
/// (`xmax` is one past the newest completed id, so a transaction that has an id but has
/// not completed, this session's own included, may be at or above it and unlisted.)
struct PostgresSnapshot: Equatable {
    /// The first transaction id not yet assigned when the snapshot was taken.
    let xmax: UInt64
    /// The ids below `xmax` still running then, ascending.
    let running: [UInt64]

    /// `nil` for text that is not a snapshot.
    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax else { return nil }
        var running: [UInt64] = []
        for part in parts[2].split(separator: ",") {
            guard let id = UInt64(part), id >= xmin, id < xmax else { return nil }
            running.append(id)
        }
        self.xmax = xmax
        self.running = running.sorted()
    }

    /// A non-negative number naming the set of completed transactions, counting
    /// `ownTransaction` (this session's, not yet committed) as running. Two snapshots get
    /// the same number exactly when they saw the same commits (up to a 63-bit hash).
    func version(ownTransaction: UInt64? = nil) -> Int64 {
        var running = Set(self.running)
        if let ownTransaction, ownTransaction < xmax { running.insert(ownTransaction) }
        return Self.version(xmax: xmax, running: running)
    }

    /// The version of this snapshot's completed set with transaction `id` completed too:
    /// what a later snapshot shows once `id` commits, if nothing else completes meanwhile.
    /// `nil` when the ids between would be too many to list (a snapshot lists the ids
    /// below its `xmax` still running; `id` may be above it, and so may ids assigned
    /// before it that are still running).
    func version(completing id: UInt64) -> Int64? {
        version(completing: [id])
    }

    /// The version of this snapshot's completed set with each of `ids` completed too (a
    /// writer's transaction and the durability barrier it ran after it).
    func version(completing ids: [UInt64]) -> Int64? {
        var running = Set(self.running)
        // The first id this snapshot and `ids` say nothing of.
        var next = xmax
        for id in ids.sorted() {
            if id >= next {
                guard id - next <= 10_000 else { return nil }
                running.formUnion(next..<id)
                next = id + 1
            }
            running.remove(id)
        }
        return Self.version(xmax: next, running: running)
    }

    private static func version(xmax: UInt64, running: Set<UInt64>) -> Int64 {
        // The newest completed id, then the ids still running below it: together they
        // give the completed set, whatever ids were assigned (and not completed) later.
        var newest = xmax
        while newest > 0 {
            newest -= 1
            if !running.contains(newest) { break }
        }
        let below = running.filter { $0 < newest }.sorted().map(String.init).joined(separator: ",")
        return Int64(bitPattern: StableHash.fnv1a("\(newest):\(below)") & UInt64(Int64.max))
    }

    /// For text that does not parse: a number that changes whenever the text does.
    static func version(ofText text: String) -> Int64 {
        Int64(bitPattern: StableHash.fnv1a(text) & UInt64(Int64.max))
    }
}
