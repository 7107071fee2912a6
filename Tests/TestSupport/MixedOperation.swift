import VaultKit

/// One random write of a `vault-test-writer mixed-ops` process, and the line it prints
/// once the call returned: `ack OPERATION SERVICE ACCOUNT VALUE OUTCOME`, where OUTCOME
/// is `done`, or the refusal the vault answered (`duplicate` for an `add` of an existing
/// item, `missing` for an `update` or `delete` of an absent one).
///
/// Each process writes its own accounts of service "mixed", so its acknowledged lines,
/// replayed in order, give their final state; and all processes race `add`s on the
/// shared accounts of service "race", where exactly one may win each.
public struct MixedOperation: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case set, add, update, delete
    }

    public enum Outcome: String, Sendable {
        case done, duplicate, missing
    }

    public var kind: Kind
    public var service: String
    public var account: String
    public var value: String

    /// A random operation for step `step` of the writer `prefix`.
    public static func random(prefix: String, step: Int, using random: inout SplitMix64) -> MixedOperation {
        let value = "\(prefix)-v\(step)"
        switch random.next() % 5 {
        case 0: return MixedOperation(kind: .add, service: "race", account: "r-\(random.next() % 8)", value: value)
        case 1: return MixedOperation(kind: .add, service: "mixed", account: "\(prefix)-\(random.next() % 6)", value: value)
        case 2: return MixedOperation(kind: .update, service: "mixed", account: "\(prefix)-\(random.next() % 6)", value: value)
        case 3: return MixedOperation(kind: .delete, service: "mixed", account: "\(prefix)-\(random.next() % 6)", value: "-")
        default: return MixedOperation(kind: .set, service: "mixed", account: "\(prefix)-\(random.next() % 6)", value: value)
        }
    }

    /// Runs the operation; the acknowledgement line, printed only after the call returned.
    public func run(on vault: Vault) throws(VaultError) -> String {
        var outcome = Outcome.done
        switch kind {
        case .set:
            try vault.set(value, service: service, account: account)
        case .add:
            do { try vault.add(value, service: service, account: account) } catch .duplicateItem { outcome = .duplicate }
        case .update:
            do { try vault.update(value, service: service, account: account) } catch .itemNotFound { outcome = .missing }
        case .delete:
            if try !vault.delete(service: service, account: account) { outcome = .missing }
        }
        return "ack \(kind.rawValue) \(service) \(account) \(value) \(outcome.rawValue)"
    }

    /// Parses an acknowledgement line; `nil` for any other line.
    public static func parse(_ line: Substring) -> (MixedOperation, Outcome)? {
        let fields = line.split(separator: " ").map(String.init)
        guard fields.count == 6, fields[0] == "ack", let kind = Kind(rawValue: fields[1]), let outcome = Outcome(rawValue: fields[5]) else { return nil }
        return (MixedOperation(kind: kind, service: fields[2], account: fields[3], value: fields[4]), outcome)
    }
}

/// The state acknowledged operations lead to, built by replaying them in each writer's
/// order, and the acknowledgements that replay disagrees with.
public struct MixedReplay: Sendable {
    /// service -> account -> value.
    public private(set) var items: [String: [String: String]] = [:]
    /// Acknowledgements a vault holding `items` would not have given, and raced
    /// accounts with no winner or two.
    public var contradictions: [String] { refusals + raced.filter { items["race"]?[$0] == nil }.sorted().map { "race/\($0): no add won" } }
    private var refusals: [String] = []
    /// The "race" accounts some writer tried to add.
    private var raced: Set<String> = []

    public init() {}

    /// Replays one writer's acknowledged lines, in the order it printed them.
    public mutating func replay(_ output: String) {
        for line in output.split(separator: "\n") {
            guard let (operation, outcome) = MixedOperation.parse(line) else { continue }
            apply(operation, outcome: outcome, line: String(line))
        }
    }

    private mutating func apply(_ operation: MixedOperation, outcome: MixedOperation.Outcome, line: String) {
        if operation.service == "race" {
            // Other writers' adds interleave with this one's: only one winner can be checked.
            raced.insert(operation.account)
            guard outcome == .done else { return }
            if let winner = items["race"]?[operation.account] { refusals.append("\(line) (\(winner) had won already)") }
            items["race", default: [:]][operation.account] = operation.value
            return
        }
        let existing = items[operation.service]?[operation.account]
        let expected: MixedOperation.Outcome = switch operation.kind {
        case .set: .done
        case .add: existing == nil ? .done : .duplicate
        case .update, .delete: existing == nil ? .missing : .done
        }
        if outcome != expected { refusals.append("\(line) (replay expected \(expected.rawValue))") }
        guard outcome == .done else { return }
        items[operation.service, default: [:]][operation.account] = operation.kind == .delete ? nil : operation.value
    }
}
