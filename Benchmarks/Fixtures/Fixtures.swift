import Benchmark
import Foundation
import VaultKit

#if canImport(Glibc)
import Glibc
#endif

/// What the suites share: the quick-mode switch, sizes, and vault files of a given size.
public enum Bench {
    /// `VAULTKIT_BENCH_QUICK=1`: a few iterations at small sizes, only to prove in CI
    /// that the suites build and run. Timings taken in quick mode mean nothing.
    public static let isQuick: Bool = {
        guard let value = ProcessInfo.processInfo.environment["VAULTKIT_BENCH_QUICK"] else { return false }
        return !value.isEmpty && value != "0"
    }()

    /// Items in the vault for the size-dependent benchmarks.
    public static let itemCounts: [Int] = isQuick ? [100, 1_000] : [1_000, 10_000, 100_000]

    /// The largest vault, for listing and the `vault get` process.
    public static var largestItemCount: Int { itemCounts.last! }

    /// Secret sizes for sealing and opening.
    public static let secretSizes: [Int] = isQuick ? [32, 1024] : [32, 256, 1024, 64 * 1024, 1024 * 1024]

    /// The secret stored in every fixture item: the size of a typical API token.
    public static let itemSecretByteCount = 32

    /// Wall time and heap allocations, as issue 4 asks for every benchmark.
    public static let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .peakMemoryResident]

    /// A configuration that caps iterations in quick mode.
    public static func configuration(
        scaling: BenchmarkScalingFactor = .one,
        maxDuration: Duration = .seconds(2),
        maxIterations: Int = 10_000,
        warmup: Int = 3,
        metrics: [BenchmarkMetric] = metrics,
        timeUnits: BenchmarkTimeUnits = .microseconds
    ) -> Benchmark.Configuration {
        .init(
            metrics: metrics,
            timeUnits: timeUnits,
            warmupIterations: isQuick ? 0 : warmup,
            scalingFactor: isQuick ? .one : scaling,
            maxDuration: isQuick ? .milliseconds(200) : maxDuration,
            maxIterations: isQuick ? min(maxIterations, 3) : maxIterations
        )
    }

    /// "32 B", "1 KiB", "64 KiB", "1 MiB".
    public static func byteLabel(_ count: Int) -> String {
        if count >= 1024 * 1024 { return "\(count / (1024 * 1024)) MiB" }
        if count >= 1024 { return "\(count / 1024) KiB" }
        return "\(count) B"
    }

    /// "1k", "10k", "100k".
    public static func countLabel(_ count: Int) -> String {
        count >= 1_000 && count % 1_000 == 0 ? "\(count / 1_000)k" : "\(count)"
    }

    /// The fixture items' names: 100 services, so one service holds 1% of a vault.
    public static func service(_ index: Int) -> String { "svc\(index % 100).example.com" }
    public static func account(_ index: Int) -> String { "user\(index)" }

    /// A directory for benchmark files, on the same disk as the working tree
    /// (`VAULTKIT_BENCH_DIR` overrides it), removed when the process exits normally.
    public static let scratchDirectory: String = {
        let base = ProcessInfo.processInfo.environment["VAULTKIT_BENCH_DIR"]
            ?? FileManager.default.currentDirectoryPath + "/.build/bench-scratch"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        var template = Array("\(base)/run-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { buffer -> String in
            guard let made = mkdtemp(buffer.baseAddress!) else { fatalError("mkdtemp failed in \(base): errno \(errno)") }
            return String(cString: made)
        }
        atexit { try? FileManager.default.removeItem(atPath: Bench.scratchDirectory) }
        return directory
    }()

    /// A fresh path (no file yet) in the scratch directory.
    /// The metric bulk imports report beside their wall time.
    public static let itemsPerSecond = BenchmarkMetric.custom("items/s", polarity: .prefersLarger, useScalingFactor: false)

    /// Writes `count` fixture items into `vault` in one batch, measured, and records
    /// the rate as ``itemsPerSecond``: the bulk import of every storage engine.
    public static func measureBulkImport(_ benchmark: Benchmark, into vault: Vault, count: Int, secret: SecretBytes) {
        let start = ContinuousClock.now
        benchmark.startMeasurement()
        try! vault.batch { batch in
            for index in 0..<count {
                try batch.set(secret, service: service(index), account: account(index))
            }
        }
        benchmark.stopMeasurement()
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        benchmark.measurement(itemsPerSecond, Int(Double(count) / seconds))
    }

    public static func newPath(_ name: String) -> String {
        let suffix = UInt32.random(in: 0...UInt32.max)
        return "\(scratchDirectory)/\(name)-\(String(suffix, radix: 16)).vault"
    }

    /// Removes a vault file and SQLite's side files.
    public static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}

/// A vault of `count` items unlocked by a raw key, built once per process and size.
public final class VaultFixture: @unchecked Sendable {
    public let path: String
    public let key: VaultKey
    public let count: Int

    private nonisolated(unsafe) static var cache: [Int: VaultFixture] = [:]
    private static let lock = NSLock()

    /// The fixture with `count` items, building it on first use (not timed).
    public static func withItems(_ count: Int) throws -> VaultFixture {
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[count] { return cached }
        let fixture = try VaultFixture(count: count)
        cache[count] = fixture
        return fixture
    }

    private init(count: Int) throws {
        self.count = count
        path = Bench.newPath("items-\(count)")
        key = VaultKey.random()
        let vault = try Vault.create(at: path, key: key)
        try Self.fill(vault, range: 0..<count)
        vault.close()  // checkpoints the WAL, as a vault at rest is
    }

    /// Adds items `range` in batches of 10,000, each one transaction.
    public static func fill(_ vault: Vault, range: Range<Int>) throws {
        let secret = SecretBytes([UInt8](repeating: 0x5A, count: Bench.itemSecretByteCount))
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + 10_000, range.upperBound)
            try vault.batch { batch in
                for index in start..<end {
                    try batch.set(secret, service: Bench.service(index), account: Bench.account(index))
                }
            }
            start = end
        }
    }

    public func open() throws -> Vault {
        try Vault.open(at: path, key: key)
    }
}

/// A deterministic pseudo-random index stream, so every run touches the same items.
public struct IndexStream {
    private var state: UInt64
    private let bound: Int

    public init(bound: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.bound = bound
        state = seed
    }

    public mutating func next() -> Int {
        // SplitMix64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}

/// State a benchmark's setup hands to its closure; the runner calls setup, the
/// iterations and teardown one after another, never concurrently.
public final class Shared<Value>: @unchecked Sendable {
    public var value: Value?
    public init() {}
}
