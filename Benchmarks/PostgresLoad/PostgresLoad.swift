// One client process of Benchmarks/postgres-load.sh: K of these run at once against one
// vault, each looping random gets and sets for a fixed time, as backend processes
// refreshing tokens would. Not a package-benchmark suite: the script starts the
// processes, the bare pgbench baseline and the unrelated committer, and adds up the
// latencies each process writes.
//
//   PostgresLoad create URL VAULT COUNT KEYFILE
//       a vault of COUNT items (~50 B secrets, raw key), the key written to KEYFILE (hex, 0600)
//   PostgresLoad run URL VAULT COUNT KEYFILE WRITE_PERCENT START_EPOCH_MS SECONDS OUT SEED
//       opens the vault and verifies it (warm), then from START_EPOCH_MS (wall clock, so K processes start together) for SECONDS: a
//       random item each time, set with probability WRITE_PERCENT %, else get; writes
//       one latency per line to OUT ("r" or "w", microseconds) and prints
//       "ops errors" on stdout
//   PostgresLoad check URL VAULT COUNT KEYFILE
//       verify() and a read of every item; prints "ok" or fails
//
// The password comes from PGPASSFILE, as for every other libpq client. LOAD_KEEP_HISTORY=0
// makes each set keep no version of the value it writes over (an A/B of history's cost).
// LOAD_SHARDS=N (an experiment, not a mode of VaultKit) spreads the items over N
// independent vaults named VAULT-0 ... VAULT-(N-1), item i in vault i % N: the ceiling a
// vault split into N partitions, each with its own header lock, could reach. With
// LOAD_OWN_SHARD=1 too, process i (its seed's last three digits, minus one) uses only
// vault i % N: writers that never meet, the ceiling of any split. LOAD_STANDBY_URL: gets
// may go to that hot standby (below). LOAD_WARMUP=1: the process runs the workload,
// unmeasured, from its verification until START_EPOCH_MS (postgres-load.sh's WARMUP_SECONDS).
import Foundation
import VaultKit
import VaultKitPostgres

let arguments = CommandLine.arguments
guard arguments.count >= 6, let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: PostgresLoad create|run|check URL VAULT COUNT KEYFILE ...\n".utf8))
    exit(2)
}
let (mode, url, vaultName, keyFile) = (arguments[1], arguments[2], arguments[3], arguments[5])

func account(_ index: Int) -> String { "account-\(index)" }
let service = "load"

/// A ~50-byte secret that names the process and its write, so a wrong one would show.
func secret(_ writer: UInt64, _ serial: Int) -> SecretBytes {
    SecretBytes(Array("token-\(writer)-\(serial)-".utf8) + [UInt8](repeating: 0x61, count: 30))
}

func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
}

let shards = Int(ProcessInfo.processInfo.environment["LOAD_SHARDS"] ?? "1") ?? 1

do {
    let locations = try (0..<shards).map { shard in
        try PostgresVaultLocation(url, vaultName: shards == 1 ? vaultName : "\(vaultName)-\(shard)")
    }
    switch mode {
    case "create":
        let key = VaultKey.random()
        for (shard, location) in locations.enumerated() {
            let vault = try Vault.create(postgres: location, key: key)
            defer { vault.close() }
            let indexes = Array(stride(from: shard, to: count, by: shards))
            var start = 0
            while start < indexes.count {
                let end = min(start + 5_000, indexes.count)
                try vault.batch { batch in
                    for index in indexes[start..<end] { try batch.set(secret(0, index), service: service, account: account(index)) }
                }
                start = end
            }
        }
        let hex = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        guard FileManager.default.createFile(atPath: keyFile, contents: Data(hex.utf8), attributes: [.posixPermissions: 0o600]) else { exit(1) }
    case "run":
        guard arguments.count == 11, let writePercent = UInt64(arguments[6]), let startMs = UInt64(arguments[7]),
              let seconds = Double(arguments[8]), let seed = UInt64(arguments[10]) else { exit(2) }
        let key = try VaultKey(hex: String(decoding: FileManager.default.contents(atPath: keyFile) ?? Data(), as: UTF8.self))
        let ownShard = ProcessInfo.processInfo.environment["LOAD_OWN_SHARD"] == "1" ? Int((seed - 1) % 1000) % shards : nil
        // LOAD_STANDBY_URL (set by postgres-load.sh's LOAD_STANDBY=1 for driver B): gets may
        // be answered by that hot standby, within LOAD_STANDBY_STALENESS_MS (default 1000).
        let environment = ProcessInfo.processInfo.environment
        let standby = environment["LOAD_STANDBY_URL"].flatMap { $0.isEmpty ? nil : $0 }
        let staleness = Duration.milliseconds(Int(environment["LOAD_STANDBY_STALENESS_MS"] ?? "") ?? 1_000)
        let vaults = try locations.enumerated().map { shard, location in
            let location = try standby.map { try location.readingFromStandby($0, maxStaleness: staleness) } ?? location
            return ownShard == nil || ownShard == shard ? try Vault.open(postgres: location, key: key) : nil
        }.compactMap { $0 }
        defer { for vault in vaults { vault.close() } }
        // Warm: every bucket verified once before the clock starts (a long-running backend's
        // steady state), so a short point measures that, not the first touch of each bucket.
        for vault in vaults { _ = try vault.verify() }
        let keepHistory = ProcessInfo.processInfo.environment["LOAD_KEEP_HISTORY"] != "0"
        var random = SplitMix(seed: seed)
        // LOAD_WARMUP=1: the workload itself, not measured, until the clock starts (what a
        // backend that has been writing for a while keeps: the rows of the buckets it wrote).
        if environment["LOAD_WARMUP"] == "1" {
            var warmSerial = 0
            while Date().timeIntervalSince1970 < Double(startMs) / 1_000 {
                let index = Int(random.next() % UInt64(count))
                let vault = vaults[ownShard == nil ? index % shards : 0]
                if random.next() % 100 < writePercent {
                    warmSerial += 1
                    try? vault.set(secret(seed, -warmSerial), service: service, account: account(index), keepHistory: keepHistory)
                } else {
                    _ = try? vault.secret(service: service, account: account(index))
                }
            }
        }
        let wait = Double(startMs) / 1_000 - Date().timeIntervalSince1970
        if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        let end = monotonicMicroseconds() + UInt64(seconds * 1_000_000)
        var lines = ""
        lines.reserveCapacity(1 << 20)
        var (ops, errors, serial) = (0, 0, 0)
        while true {
            let begin = monotonicMicroseconds()
            if begin >= end { break }
            let drawn = Int(random.next() % UInt64(count))
            let index = ownShard.map { drawn - drawn % shards + $0 < count ? drawn - drawn % shards + $0 : $0 } ?? drawn
            let writing = random.next() % 100 < writePercent
            let vault = ownShard == nil ? vaults[index % shards] : vaults[0]
            do {
                if writing {
                    serial += 1
                    try vault.set(secret(seed, serial), service: service, account: account(index), keepHistory: keepHistory)
                } else {
                    _ = try vault.secret(service: service, account: account(index))
                }
                ops += 1
                lines += "\(writing ? "w" : "r") \(monotonicMicroseconds() - begin)\n"
            } catch {
                errors += 1
                FileHandle.standardError.write(Data("PostgresLoad: \(error)\n".utf8))
            }
        }
        guard FileManager.default.createFile(atPath: arguments[9], contents: Data(lines.utf8)) else { exit(1) }
        print("\(ops) \(errors)")
    case "check":
        let key = try VaultKey(hex: String(decoding: FileManager.default.contents(atPath: keyFile) ?? Data(), as: UTF8.self))
        let vaults = try locations.map { try Vault.open(postgres: $0, key: key) }
        defer { for vault in vaults { vault.close() } }
        for vault in vaults { try vault.verify() }
        for index in 0..<count { _ = try vaults[index % shards].secret(service: service, account: account(index)) }
        print("ok")
    default:
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("PostgresLoad \(mode): \(error)\n".utf8))
    exit(1)
}

/// A small seeded generator: each process draws its own sequence of items.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
