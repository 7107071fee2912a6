/// What `vault-test-writer load-ops` workers logged over several rounds (some killed with
/// SIGKILL mid-round), and the checks the vault's final state must pass against it.
///
/// Rounds run one after the other, and a round ends only once the server holds no session
/// of its workers any more, so a killed worker's write in flight has committed or rolled
/// back before the next round starts. What is checked, and no more:
/// - Private accounts (one worker each): every read, and the final state, is one that the
///   worker's acknowledged operations in order give, where each write it was killed in may
///   or may not have happened (``possibleStates``, a set of states narrowed line by line).
///   Each acknowledged outcome (`duplicate`, `missing`) must fit one of those states too.
/// - Shared accounts (all workers): every value read was attempted for that account by a
///   set/add/update that started before the read ended; the final value was written by an
///   operation that could have come after every acknowledged write or delete of the
///   account (it had not been acknowledged before one of them started); and an absent
///   final state needs, for each acknowledged write, a delete that ended after it started.
public struct LoadHistory: Sendable {
    /// One logged write: when it started and ended (its round's end if it was never
    /// acknowledged) and its acknowledged outcome (`nil`: killed in flight).
    struct Write {
        var operation: LoadOperation
        var start: UInt64
        var end: UInt64
        var outcome: MixedOperation.Outcome?

        /// Whether this write may have stored `value`: it wrote that value and was not refused.
        func writes(_ value: String) -> Bool {
            operation.value == value && operation.kind != .delete && outcome != .duplicate && outcome != .missing
        }
    }

    /// Private account -> the states it may be in after the lines replayed so far (`nil`: absent).
    public private(set) var possibleStates: [String: Set<String?>] = [:]
    /// Shared account -> every write logged for it.
    var sharedWrites: [String: [Write]] = [:]
    /// Shared reads: account, value (`nil`: absent), time.
    var sharedReads: [(account: String, value: String, time: UInt64)] = []
    public private(set) var contradictions: [String] = []
    /// Operations acknowledged and writes killed in flight, for the report.
    public private(set) var acknowledged = 0, killedInFlight = 0

    public init() {}

    /// Replays one worker's log of one round, in the order it was written; `roundEnd` is
    /// a ``LoadOperation/now()`` taken after the round's sessions were gone.
    public mutating func replay(worker: String, _ output: String, roundEnd: UInt64) {
        var pending: (LoadOperation, UInt64)?
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            switch (fields.first, fields.count) {
            case ("intent", 6):
                guard pending == nil, let kind = LoadOperation.Kind(rawValue: fields[1]), let time = UInt64(fields[5]) else { return fail("\(worker): unexpected \(line)") }
                pending = (LoadOperation(kind: kind, service: fields[2], account: fields[3], value: fields[4]), time)
            case ("ack", 7):
                guard let (operation, start) = pending, let outcome = MixedOperation.Outcome(rawValue: fields[5]), let time = UInt64(fields[6]),
                      [operation.kind.rawValue, operation.service, operation.account, operation.value] == Array(fields[1...4]) else {
                    return fail("\(worker): ack without its intent: \(line)")
                }
                pending = nil
                acknowledged += 1
                record(Write(operation: operation, start: start, end: time, outcome: outcome), line: String(line))
            case ("read", 5):
                guard pending == nil, let time = UInt64(fields[4]) else { return fail("\(worker): unexpected \(line)") }
                acknowledged += 1
                read(service: fields[1], account: fields[2], value: fields[3] == "-" ? nil : fields[3], time: time, line: String(line))
            default:
                return fail("\(worker): unreadable line \(line)")
            }
        }
        if let (operation, start) = pending {
            killedInFlight += 1
            record(Write(operation: operation, start: start, end: roundEnd, outcome: nil), line: "\(worker): killed in \(operation)")
        }
    }

    /// Checks the vault's final state: service -> account -> value, absent accounts left out.
    public mutating func checkFinal(_ stored: [String: [String: String]], privateAccounts: [String]) {
        for (service, items) in stored {
            for account in items.keys where !(service == "shared" ? LoadOperation.sharedAccounts : privateAccounts).contains(account) {
                fail("\(service)/\(account) is in the vault but no worker wrote it")
            }
        }
        for account in privateAccounts {
            let value = stored["private"]?[account]
            if !(possibleStates[account] ?? [nil]).contains(value) {
                fail("private/\(account) ends as \(value ?? "absent"), not one of \(describe(possibleStates[account] ?? [nil]))")
            }
        }
        for read in sharedReads where !sharedWrites[read.account, default: []].contains(where: { $0.writes(read.value) && $0.start < read.time }) {
            fail("shared/\(read.account) read as \(read.value), which no write of that account that started before wrote")
        }
        for account in LoadOperation.sharedAccounts {
            checkFinalShared(account, value: stored["shared"]?[account])
        }
    }

    private mutating func checkFinalShared(_ account: String, value: String?) {
        let writes = sharedWrites[account, default: []]
        let effective = writes.filter { $0.outcome == .done }
        if let value {
            guard let writer = writes.first(where: { $0.writes(value) }) else {
                return fail("shared/\(account) ends as \(value), which no write that took effect wrote")
            }
            for other in effective where other.operation != writer.operation && other.start >= writer.end {
                fail("shared/\(account) ends as \(value), acknowledged before \(other.operation) started")
            }
        } else {
            let deletes = writes.filter { $0.operation.kind == .delete && $0.outcome != .missing }
            for write in effective where write.operation.kind != .delete && !deletes.contains(where: { $0.end > write.start }) {
                fail("shared/\(account) ends absent, but no delete could follow the acknowledged \(write.operation)")
            }
        }
    }

    private mutating func record(_ write: Write, line: String) {
        let operation = write.operation
        if operation.service == "shared" {
            sharedWrites[operation.account, default: []].append(write)
            return
        }
        let before = possibleStates[operation.account] ?? [nil]
        let value: String? = operation.kind == .delete ? nil : operation.value
        guard let outcome = write.outcome else {
            // Killed in flight: it may have happened or not.
            possibleStates[operation.account] = before.union(before.map { apply(operation, to: $0) })
            return
        }
        let fitting: Set<String?> = switch (operation.kind, outcome) {
        case (.set, .done): before
        case (.add, .done), (.update, .missing), (.delete, .missing): before.filter { $0 == nil }
        case (.add, .duplicate), (.update, .done), (.delete, .done): before.filter { $0 != nil }
        default: []
        }
        if fitting.isEmpty { return fail("\(line) fits none of \(describe(before))") }
        possibleStates[operation.account] = outcome == .done ? [value] : fitting
    }

    private func apply(_ operation: LoadOperation, to state: String?) -> String? {
        switch operation.kind {
        case .set: operation.value
        case .add: state ?? operation.value
        case .update: state == nil ? nil : operation.value
        case .delete, .get: nil
        }
    }

    private mutating func read(service: String, account: String, value: String?, time: UInt64, line: String) {
        if service == "private" {
            let before = possibleStates[account] ?? [nil]
            guard before.contains(value) else { return fail("\(line): read, but the account could only hold \(describe(before))") }
            possibleStates[account] = [value]
            return
        }
        // Other workers' logs are replayed later: checked in checkFinal.
        if let value { sharedReads.append((account, value, time)) }
    }

    private mutating func fail(_ message: String) { contradictions.append(message) }

    private func describe(_ states: Set<String?>) -> String { "{" + states.map { $0 ?? "absent" }.sorted().joined(separator: ", ") + "}" }
}
