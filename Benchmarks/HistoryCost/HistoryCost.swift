// Issue 29, item 4: what item history costs.
//
//   HistoryCost set file|postgres [ITEMS] [PAIRS]   a durable `set` that keeps history and
//                                                   one that does not (`keepHistory: false`),
//                                                   interleaved pair by pair on one vault
//   HistoryCost scale [ITEMS] [VERSIONS] [ROUNDS]   a vault of ITEMS items with VERSIONS kept
//                                                   versions each against the same items
//                                                   without history: get, list, verify, size
//
// Not a package-benchmark suite: both parts build their fixtures once and time each side
// in turns (which side goes first alternates), so the ratio of a pair is taken on the
// same disk or server at the same moment; `history-cost.sh` runs it on both engines.
// PostgreSQL needs VAULTKIT_TEST_POSTGRES_URL and PGPASSFILE (scripts/postgres-test-cluster.sh).
import Foundation
import VaultKit
import VaultKitPostgres

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
func argument(_ index: Int, default value: Int) -> Int { arguments.count > index ? Int(arguments[index])! : value }

let secret = SecretBytes([UInt8](repeating: 0x5A, count: 32))
func service(_ index: Int) -> String { "svc\(index % 100).example.com" }
func account(_ index: Int) -> String { "user\(index)" }

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

/// The p-th percentile (nearest rank) of `values`.
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))]
}

func row(_ name: String, _ values: [Double], unit: String = "µs") -> String {
    String(format: "| %@ | %.1f | %.1f | %.1f | %@ |", name, percentile(values, 25), percentile(values, 50), percentile(values, 75), unit)
}

/// A scratch directory removed at exit.
let scratch: String = {
    var template = Array((FileManager.default.currentDirectoryPath + "/.build/history-cost-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    atexit { try? FileManager.default.removeItem(atPath: scratch) }
    return made
}()

/// Sets every item of `range` `passes` times, one batch per pass, so each keeps
/// `passes - 1` versions (at most the retention) when `keepHistory`.
func fill(_ vault: Vault, range: Range<Int>, passes: Int, keepHistory: Bool) throws {
    for pass in 0..<passes {
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + 10_000, range.upperBound)
            try vault.batch { batch in
                for index in start..<end {
                    var value = secret
                    value.append(UInt8(truncatingIfNeeded: pass))
                    try batch.set(value, service: service(index), account: account(index), keepHistory: keepHistory)
                }
            }
            start = end
        }
    }
}

// MARK: set with history against set without, interleaved

func measureSet(engine: String, items: Int, pairs: Int) throws {
    let key = VaultKey.random()
    let vault: Vault
    switch engine {
    case "file": vault = try Vault.create(at: scratch + "/set.vault", key: key)
    case "postgres":
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"] else { fatalError("VAULTKIT_TEST_POSTGRES_URL is not set") }
        vault = try Vault.create(postgres: try PostgresVaultLocation(url, vaultName: "history-" + UUID().uuidString.lowercased()), key: key)
    default: fatalError("engine: file or postgres")
    }
    defer { vault.close() }
    // Items 0..<items keep history and are at the retention already (each `set` then
    // archives one version and trims one, the steady state); items..<2*items never keep any.
    let retention = try vault.historyRetention()
    try fill(vault, range: 0..<items, passes: retention + 1, keepHistory: true)
    try fill(vault, range: items..<(2 * items), passes: 1, keepHistory: false)
    var withHistory: [Double] = [], without: [Double] = [], ratios: [Double] = []
    var generator = SystemRandomNumberGenerator()
    let clock = ContinuousClock()
    for pair in 0..<(pairs + 20) {
        let kept = Int.random(in: 0..<items, using: &generator), plain = items + Int.random(in: 0..<items, using: &generator)
        var keptTime = Duration.zero, plainTime = Duration.zero
        let keep = { keptTime = try clock.measure { try vault.set(secret, service: service(kept), account: account(kept)) } }
        let skip = { plainTime = try clock.measure { try vault.set(secret, service: service(plain), account: account(plain), keepHistory: false) } }
        if pair.isMultiple(of: 2) { try keep(); try skip() } else { try skip(); try keep() }
        guard pair >= 20 else { continue }  // warm-up
        withHistory.append(microseconds(keptTime))
        without.append(microseconds(plainTime))
        ratios.append(microseconds(keptTime) / microseconds(plainTime))
    }
    print("durable set, \(engine), \(items) items keeping history (retention \(retention), at it) and \(items) without, \(pairs) interleaved pairs\n")
    print("| set | p25 | p50 | p75 | unit |\n|---|---|---|---|---|")
    print(row("with history", withHistory))
    print(row("without (`keepHistory: false`)", without))
    print(row("ratio with/without, per pair", ratios, unit: "x"))
    print(String(format: "\nratio of medians: %.3fx\n", percentile(withHistory, 50) / percentile(without, 50)))
}

// MARK: a large vault with history against the same without

func fileSize(_ path: String) -> Int64 {
    ["", "-wal"].reduce(0) { total, suffix in
        var info = stat()
        return total + (stat(path + suffix, &info) == 0 ? Int64(info.st_size) : 0)
    }
}

func measureScale(items: Int, versions: Int, rounds: Int) throws {
    let key = VaultKey.random()
    let paths = (history: scratch + "/history.vault", plain: scratch + "/plain.vault")
    let clock = ContinuousClock()
    var built: [String: Duration] = [:]
    for (name, path, passes) in [("history", paths.history, versions + 1), ("plain", paths.plain, 1)] {
        let vault = try Vault.create(at: path, key: key)
        if versions > (try vault.historyRetention()) { try vault.setHistoryRetention(versions) }
        built[name] = try clock.measure { try fill(vault, range: 0..<items, passes: passes, keepHistory: true) }
        vault.close()  // checkpoints the WAL, as a vault at rest is
    }
    let history = try Vault.open(at: paths.history, key: key), plain = try Vault.open(at: paths.plain, key: key)
    defer { history.close(); plain.close() }
    _ = try history.items(service: service(0)); _ = try plain.items(service: service(0))
    var times: [String: [Double]] = [:]
    var generator = SystemRandomNumberGenerator()
    func both(_ name: String, _ round: Int, _ body: (Vault) throws -> Void) throws {
        let first = round.isMultiple(of: 2) ? ("history", history) : ("plain", plain)
        let second = round.isMultiple(of: 2) ? ("plain", plain) : ("history", history)
        for (side, vault) in [first, second] { times["\(name) \(side)", default: []].append(microseconds(try clock.measure { try body(vault) })) }
    }
    for round in 0..<(rounds * 200) {
        let index = Int.random(in: 0..<items, using: &generator)
        try both("get", round) { _ = try $0.secret(service: service(index), account: account(index)) }
    }
    for round in 0..<rounds {
        try both("list one service", round) { _ = try $0.items(service: service(round)) }
        try both("list all", round) { _ = try $0.items(service: nil) }
        try both("verify", round) { _ = try $0.verify() }
    }
    print("\(items) items, \(versions) kept versions each (history) against the same items without history (plain); file vaults; \(rounds) rounds, sides alternated\n")
    print("| operation | vault | p25 | p50 | p75 | unit |\n|---|---|---|---|---|---|")
    for name in ["get", "list one service", "list all", "verify"] {
        for side in ["plain", "history"] {
            let values = times["\(name) \(side)"]!
            print(String(format: "| %@ | %@ | %.1f | %.1f | %.1f | µs |", name, side, percentile(values, 25), percentile(values, 50), percentile(values, 75)))
        }
        print(String(format: "| %@ | history/plain (medians) | | %.3fx | | |", name, percentile(times["\(name) history"]!, 50) / percentile(times["\(name) plain"]!, 50)))
    }
    let sizes = (history: fileSize(paths.history), plain: fileSize(paths.plain))
    print(String(format: "\nfile size: plain %.1f MiB, history %.1f MiB (%.2fx); built in %.1f s and %.1f s\n",
                 Double(sizes.plain) / 1_048_576, Double(sizes.history) / 1_048_576, Double(sizes.history) / Double(sizes.plain),
                 microseconds(built["plain"]!) / 1e6, microseconds(built["history"]!) / 1e6))
}

switch arguments.first {
case "set": try measureSet(engine: arguments.count > 1 ? arguments[1] : "file", items: argument(2, default: 1_000), pairs: argument(3, default: 2_000))
case "scale": try measureScale(items: argument(1, default: 100_000), versions: argument(2, default: 10), rounds: argument(3, default: 5))
default:
    FileHandle.standardError.write(Data("usage: HistoryCost set file|postgres [ITEMS] [PAIRS] | scale [ITEMS] [VERSIONS] [ROUNDS]\n".utf8))
    exit(2)
}
