#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

/// One random operation of a `vault-test-writer load-ops` worker, and the lines it logs.
///
/// The worker logs `intent KIND SERVICE ACCOUNT VALUE TIME` before it calls the vault and
/// `ack KIND SERVICE ACCOUNT VALUE OUTCOME TIME` after the call returned (a `get` logs
/// `read SERVICE ACCOUNT VALUE TIME`, `-` for absent). Each line is one `write(2)` to a pipe,
/// so a SIGKILL loses no line already logged: a killed worker's last `intent` without an
/// `ack` is the write it died in. TIME is ``LoadOperation/now()``, one clock for every process.
///
/// Service "shared" has accounts all workers write; service "private" has each worker's own.
/// Every value names its writer, round and step, so no two writes ever carry the same value.
public struct LoadOperation: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case set, add, update, delete, get
    }

    public var kind: Kind
    public var service: String
    public var account: String
    public var value: String

    public static let sharedAccounts = (0..<4).map { "s-\($0)" }

    public static func privateAccounts(worker: Int) -> [String] { (0..<4).map { "w\(worker)-\($0)" } }

    /// The operation for step `step` of `worker` in `round`.
    public static func random(worker: Int, round: Int, step: Int, using random: inout SplitMix64) -> LoadOperation {
        let kinds: [Kind] = [.set, .set, .add, .update, .delete, .get]
        let kind = kinds[Int(random.next() % UInt64(kinds.count))]
        let isShared = random.next() % 2 == 0
        let accounts = isShared ? sharedAccounts : privateAccounts(worker: worker)
        let account = accounts[Int(random.next() % UInt64(accounts.count))]
        let value = kind == .delete || kind == .get ? "-" : "w\(worker).r\(round).\(step)"
        return LoadOperation(kind: kind, service: isShared ? "shared" : "private", account: account, value: value)
    }

    /// Nanoseconds on CLOCK_MONOTONIC, which every process on this machine shares.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Runs the operation, calling `log` with the intent first and the outcome once the call returned.
    public func run(on vault: Vault, log: (String) -> Void) throws(VaultError) {
        if kind == .get {
            var read = "-"
            do { read = try vault.string(service: service, account: account) } catch .itemNotFound {}
            log("read \(service) \(account) \(read) \(Self.now())")
            return
        }
        log("intent \(kind.rawValue) \(service) \(account) \(value) \(Self.now())")
        var outcome = MixedOperation.Outcome.done
        switch kind {
        case .set:
            try vault.set(value, service: service, account: account)
        case .add:
            do { try vault.add(value, service: service, account: account) } catch .duplicateItem { outcome = .duplicate }
        case .update:
            do { try vault.update(value, service: service, account: account) } catch .itemNotFound { outcome = .missing }
        case .delete:
            if try !vault.delete(service: service, account: account) { outcome = .missing }
        case .get:
            break
        }
        log("ack \(kind.rawValue) \(service) \(account) \(value) \(outcome.rawValue) \(Self.now())")
    }
}
