// VaultKitPostgres against the bare libpq round trips it cannot beat, in the same run on
// the same server: get beside a SELECT by primary key, durable set beside an
// INSERT ... ON CONFLICT committed on its own (each apart, and each interleaved pair by
// pair with a control pair), bulk import of 100,000 items in one batch, and listing one
// service. Needs a server: `Benchmarks/postgres.sh` starts one, pins it to a CPU of its
// own and runs these; by hand, VAULTKIT_TEST_POSTGRES_URL (no password) and PGPASSFILE,
// as `scripts/postgres-test-cluster.sh start` prints (Benchmarks/README.md).
import Benchmark
import BenchmarkFixtures
import CLibPQRaw
import Foundation
import VaultKit
import VaultKitPostgres

let benchmarks: @Sendable () -> Void = {
    let secret = SecretBytes([UInt8](repeating: 0xC3, count: Bench.itemSecretByteCount))
    let count = Bench.isQuick ? 1_000 : 10_000
    let label = Bench.countLabel(count)

    // MARK: The floor: bare libpq, one prepared statement, binary parameters

    let bareState = Shared<(BarePostgres, IndexStream)>()
    let bareSetup: Benchmark.BenchmarkSetupHook = { bareState.value = (try BarePostgres(rows: count), IndexStream(bound: count)) }
    let bareTeardown: Benchmark.BenchmarkTeardownHook = { bareState.value = nil }
    Benchmark(
        "bare SELECT by primary key @\(label)",
        configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(3)),
        closure: { benchmark in
            var (bare, indices) = bareState.value!
            for _ in benchmark.scaledIterations { blackHole(bare.select(indices.next())) }
            bareState.value = (bare, indices)
        },
        setup: bareSetup, teardown: bareTeardown
    )
    Benchmark(
        "bare INSERT ON CONFLICT + commit @\(label)",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 2_000),
        closure: { benchmark in
            var (bare, indices) = bareState.value!
            for _ in benchmark.scaledIterations { bare.upsert(indices.next()) }
            bareState.value = (bare, indices)
        },
        setup: bareSetup, teardown: bareTeardown
    )

    // MARK: VaultKitPostgres

    let vaultState = Shared<(Vault, IndexStream)>()
    let vaultSetup: Benchmark.BenchmarkSetupHook = {
        let vault = try Vault.create(postgres: PostgresBench.newLocation(), key: VaultKey.random())
        try VaultFixture.fill(vault, range: 0..<count)
        vaultState.value = (vault, IndexStream(bound: count))
    }
    let vaultTeardown: Benchmark.BenchmarkTeardownHook = { vaultState.value?.0.close(); vaultState.value = nil }
    Benchmark(
        "get @\(label)",
        configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(3)),
        closure: { benchmark in
            var (vault, indices) = vaultState.value!
            for _ in benchmark.scaledIterations {
                let index = indices.next()
                blackHole(try! vault.secret(service: Bench.service(index), account: Bench.account(index)))
            }
            vaultState.value = (vault, indices)
        },
        setup: vaultSetup, teardown: vaultTeardown
    )
    Benchmark(
        "set durable @\(label)",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 2_000),
        closure: { benchmark in
            var (vault, indices) = vaultState.value!
            for _ in benchmark.scaledIterations {
                let index = indices.next()
                try! vault.set(secret, service: Bench.service(index), account: Bench.account(index))
            }
            vaultState.value = (vault, indices)
        },
        setup: vaultSetup, teardown: vaultTeardown
    )
    Benchmark(
        "list one service (\(count / 100) items) @\(label)",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 500),
        closure: { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! vaultState.value!.0.items(service: Bench.service(7))) }
        },
        setup: vaultSetup, teardown: vaultTeardown
    )

    // MARK: Each operation and its floor, interleaved

    // The benchmarks above run one after the other, seconds apart, and the server's
    // state drifts between them (a durable commit's time with the disk; a read's with the
    // checkpoint a bulk import leaves behind). Here each iteration is one pair, the bare
    // libpq call and VaultKit's in turns (which goes first alternates), so both see the
    // same server at the same moment. Each side's times go to their own metric, and each
    // pair's ratio to a third. In the set pair every bare upsert is also a commit
    // elsewhere on the server before the next `set`, as on any shared server.
    //
    // The first pair is the control: two bare connections doing the same SELECT. Unless
    // the server runs on CPUs of its own (`postgres.sh` pins it), the two connections'
    // backends land on CPUs differently, and one side is up to twice as slow as the other
    // for nothing VaultKit does; the control's ratio shows whether a run is fair.
    let pairState = Shared<(PairFixture, IndexStream)>()
    let pairSetup: Benchmark.BenchmarkSetupHook = {
        // The bare tables first: the vault's fill is then the last commit before the pairs.
        let bare = try BarePostgres(rows: count)
        let otherBare = try BarePostgres(rows: count)
        let vault = try Vault.create(postgres: PostgresBench.newLocation(), key: VaultKey.random())
        try VaultFixture.fill(vault, range: 0..<count)
        pairState.value = (PairFixture(bare: bare, otherBare: otherBare, vault: vault), IndexStream(bound: count))
    }
    let pairTeardown: Benchmark.BenchmarkTeardownHook = { pairState.value?.0.vault.close(); pairState.value = nil }
    for pair in [
        InterleavedPair(name: "bare SELECT and bare SELECT (control)", floor: "bare SELECT", subject: "the other bare SELECT",
                        runFloor: { fixture, index in blackHole(fixture.bare.select(index)) },
                        runSubject: { fixture, index in blackHole(fixture.otherBare.select(index)) }),
        InterleavedPair(name: "get and bare SELECT", floor: "bare SELECT", subject: "get",
                        runFloor: { fixture, index in blackHole(fixture.bare.select(index)) },
                        runSubject: { fixture, index in
                            blackHole(try! fixture.vault.secret(service: Bench.service(index), account: Bench.account(index)))
                        }),
        InterleavedPair(name: "set durable and bare upsert", floor: "bare upsert + commit", subject: "set durable",
                        runFloor: { fixture, index in fixture.bare.upsert(index) },
                        runSubject: { fixture, index in
                            try! fixture.vault.set(secret, service: Bench.service(index), account: Bench.account(index))
                        }),
    ] {
        Benchmark(
            "\(pair.name), interleaved @\(label)",
            configuration: Bench.configuration(maxDuration: .seconds(6), maxIterations: 4_000, metrics: [.wallClock] + pair.metrics),
            closure: { benchmark in
                var (fixture, indices) = pairState.value!
                for iteration in benchmark.scaledIterations {
                    let index = indices.next()
                    var floorTime = Duration.zero
                    var subjectTime = Duration.zero
                    let floor = { floorTime = ContinuousClock().measure { pair.runFloor(fixture, index) } }
                    let subject = { subjectTime = ContinuousClock().measure { pair.runSubject(fixture, index) } }
                    if iteration.isMultiple(of: 2) { floor(); subject() } else { subject(); floor() }
                    pair.record(benchmark, floor: floorTime, subject: subjectTime)
                }
                pairState.value = (fixture, indices)
            },
            setup: pairSetup, teardown: pairTeardown
        )
    }

    // MARK: Bulk import: N new items in one batch (one transaction)

    let importCount = Bench.isQuick ? 1_000 : 100_000
    Benchmark(
        "bulk import \(Bench.countLabel(importCount)) items in one batch",
        configuration: Bench.configuration(
            maxDuration: .seconds(30), maxIterations: Bench.isQuick ? 2 : 3, warmup: 0,
            metrics: Bench.metrics + [Bench.itemsPerSecond]
        )
    ) { benchmark in
        let vault = try! Vault.create(postgres: PostgresBench.newLocation(), key: VaultKey.random())
        defer { vault.close() }
        Bench.measureBulkImport(benchmark, into: vault, count: importCount, secret: secret)
    }
}

/// The server, and a new vault name for each fixture (vaults share the database).
enum PostgresBench {
    static let url: String = {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else {
            fatalError("VAULTKIT_TEST_POSTGRES_URL is not set: eval \"$(scripts/postgres-test-cluster.sh start)\" first")
        }
        return url
    }()

    static func newLocation() throws -> PostgresVaultLocation {
        try PostgresVaultLocation(url, vaultName: "bench-" + UUID().uuidString.lowercased())
    }
}

/// What the interleaved pairs run on: two bare connections (each with its own table) and
/// a vault of the same size.
struct PairFixture: @unchecked Sendable {
    let bare: BarePostgres
    let otherBare: BarePostgres
    let vault: Vault
}

/// One bare libpq call and the VaultKit call it is the floor of, timed in turns: each
/// side's microseconds, and the VaultKit call's time as a percentage of the bare one's
/// in the same pair.
struct InterleavedPair {
    let name: String
    let runFloor: @Sendable (PairFixture, Int) -> Void
    let runSubject: @Sendable (PairFixture, Int) -> Void
    private let floorMetric: BenchmarkMetric
    private let subjectMetric: BenchmarkMetric
    private let ratioMetric: BenchmarkMetric

    init(name: String, floor: String, subject: String,
         runFloor: @escaping @Sendable (PairFixture, Int) -> Void,
         runSubject: @escaping @Sendable (PairFixture, Int) -> Void) {
        self.name = name
        self.runFloor = runFloor
        self.runSubject = runSubject
        floorMetric = .custom("\(floor) (μs)", polarity: .prefersSmaller, useScalingFactor: false)
        subjectMetric = .custom("\(subject) (μs)", polarity: .prefersSmaller, useScalingFactor: false)
        ratioMetric = .custom("\(subject) ÷ \(floor), per pair (%)", polarity: .prefersSmaller, useScalingFactor: false)
    }

    var metrics: [BenchmarkMetric] { [floorMetric, subjectMetric, ratioMetric] }

    func record(_ benchmark: Benchmark, floor: Duration, subject: Duration) {
        let floorNanoseconds = Self.nanoseconds(floor)
        let subjectNanoseconds = Self.nanoseconds(subject)
        benchmark.measurement(floorMetric, floorNanoseconds / 1_000)
        benchmark.measurement(subjectMetric, subjectNanoseconds / 1_000)
        benchmark.measurement(ratioMetric, subjectNanoseconds * 100 / max(floorNanoseconds, 1))
    }

    private static func nanoseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
    }
}

/// The least a client can do for the same work: one connection, a table keyed by 32
/// bytes (as VaultKit's lookup IDs are) holding a value the size of a sealed item, and
/// two prepared statements with binary parameters. Each upsert is its own transaction,
/// committed (synchronous_commit on, as the server is configured).
final class BarePostgres: @unchecked Sendable {
    private let connection: OpaquePointer
    private let table = "bench_bare_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    private let value = [UInt8](repeating: 0x5A, count: 32 + 24 + 16 + 64)

    init(rows: Int) throws {
        guard let connection = PQconnectdb(PostgresBench.url), PQstatus(connection) == CONNECTION_OK else {
            throw CancellationError()
        }
        self.connection = connection
        try execute("CREATE TABLE \(table) (id bytea PRIMARY KEY, value bytea NOT NULL)")
        try prepare("select", "SELECT value FROM \(table) WHERE id = $1")
        try prepare("upsert", "INSERT INTO \(table) (id, value) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value")
        try execute("BEGIN")
        for row in 0..<rows { upsert(row) }
        try execute("COMMIT")
    }

    deinit {
        PQclear(PQexec(connection, "DROP TABLE IF EXISTS \(table)"))
        PQfinish(connection)
    }

    /// The value stored under row `index`'s key, as bytes.
    func select(_ index: Int) -> [UInt8] {
        withParameters([Self.key(index)]) { values, lengths, formats in
            let result = PQexecPrepared(connection, "select", 1, values, lengths, formats, 1)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) == 1, let bytes = PQgetvalue(result, 0, 0) else {
                fatalError("bare SELECT failed")
            }
            return Array(UnsafeRawBufferPointer(start: bytes, count: Int(PQgetlength(result, 0, 0))).bindMemory(to: UInt8.self))
        }
    }

    /// Row `index` written, committed on its own (outside setup's BEGIN ... COMMIT).
    func upsert(_ index: Int) {
        withParameters([Self.key(index), value]) { values, lengths, formats in
            let result = PQexecPrepared(connection, "upsert", 2, values, lengths, formats, 1)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { fatalError("bare upsert failed") }
        }
    }

    private static func key(_ index: Int) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: 32)
        withUnsafeBytes(of: UInt64(index).bigEndian) { key.replaceSubrange(0..<8, with: $0) }
        return key
    }

    private func withParameters<Result>(
        _ parameters: [[UInt8]],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) -> Result
    ) -> Result {
        let lengths = parameters.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let pointers = parameters.map { bytes -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            UnsafeMutableRawPointer(copy).copyMemory(from: bytes, byteCount: bytes.count)
            return copy
        }
        defer { pointers.forEach { $0.deallocate() } }
        let values: [UnsafePointer<CChar>?] = pointers.map { UnsafePointer($0) }
        return body(values, lengths, formats)
    }

    private func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw CancellationError() }
    }

    private func prepare(_ name: String, _ sql: String) throws {
        let result = PQprepare(connection, name, sql, 0, nil)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw CancellationError() }
    }
}
