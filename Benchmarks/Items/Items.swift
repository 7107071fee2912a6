// Vault operations at 1,000 / 10,000 / 100,000 items: `get`, durable `set`, bulk import
// in one transaction, listing one service, and in the same run the physical floor of a
// durable write: a bare 4 KiB pwrite + fsync on the same disk.
import Benchmark
import BenchmarkFixtures
import Foundation
import VaultKit

#if canImport(Glibc)
import Glibc
#endif

let benchmarks: @Sendable () -> Void = {
    let secret = SecretBytes([UInt8](repeating: 0xC3, count: Bench.itemSecretByteCount))

    // MARK: The floor: one 4 KiB pwrite + fsync

    Benchmark(
        "fsync floor: pwrite 4 KiB + fsync",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 2_000)
    ) { benchmark in
        let floor = FsyncFloor(path: Bench.scratchDirectory + "/fsync-floor")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { floor.writeAndSync() }
        benchmark.stopMeasurement()
    }

    // SQLite syncs its WAL with fdatasync on Linux (no file metadata): the floor it can reach.
    Benchmark(
        "fdatasync floor: pwrite 4 KiB + fdatasync",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 2_000)
    ) { benchmark in
        let floor = FsyncFloor(path: Bench.scratchDirectory + "/fdatasync-floor", dataOnly: true)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { floor.writeAndSync() }
        benchmark.stopMeasurement()
    }

    asyncHopFloorBenchmarks()

    for count in Bench.itemCounts {
        let label = Bench.countLabel(count)

        // MARK: get

        // One vault handle per size, opened in setup and kept across iterations, as a
        // server keeps it; every get reads a different pseudo-random item.
        let getState = Shared<(Vault, IndexStream)>()
        Benchmark(
            "get @\(label)",
            configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(2)),
            closure: { benchmark in
                var (vault, indices) = getState.value!
                for _ in benchmark.scaledIterations {
                    let index = indices.next()
                    blackHole(try! vault.secret(service: Bench.service(index), account: Bench.account(index)))
                }
                getState.value = (vault, indices)
            },
            setup: {
                let fixture = try VaultFixture.withItems(count)
                getState.value = (try fixture.open(), IndexStream(bound: count))
            },
            teardown: { getState.value?.0.close(); getState.value = nil }
        )

        // MARK: get, async (AsyncHop.swift)

        asyncGetBenchmarks(count: count)

        // MARK: get after another connection's commit

        // What a process pays when another one wrote since its last call: SQLite's
        // data_version changed, so the get verifies the manifest root and its item's
        // bucket again. The other connection's durable write is not measured.
        let sharedState = Shared<(reader: Vault, writer: Vault, indices: IndexStream)>()
        Benchmark(
            "get after another connection's write @\(label)",
            configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 1_000),
            closure: { benchmark in
                var (reader, writer, indices) = sharedState.value!
                let written = indices.next()
                try! writer.set(secret, service: Bench.service(written), account: Bench.account(written))
                let index = indices.next()
                benchmark.startMeasurement()
                blackHole(try! reader.secret(service: Bench.service(index), account: Bench.account(index)))
                benchmark.stopMeasurement()
                sharedState.value = (reader, writer, indices)
            },
            setup: {
                let fixture = try VaultFixture.withItems(count)
                sharedState.value = (try fixture.open(), try fixture.open(), IndexStream(bound: count, seed: 7))
            },
            teardown: {
                sharedState.value?.reader.close()
                sharedState.value?.writer.close()
                sharedState.value = nil
            }
        )

        // MARK: set (durable, as shipped)

        // Updates existing items, so the vault stays at its size; each call is one
        // BEGIN IMMEDIATE ... COMMIT with synchronous=FULL, i.e. at least one fsync.
        // With a rollback guard, each commit also writes its small record (under flock).
        for guarded in [false, true] {
            let setState = Shared<(Vault, IndexStream)>()
            Benchmark(
                guarded ? "set durable with rollback guard @\(label)" : "set durable @\(label)",
                configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 2_000),
                closure: { benchmark in
                    var (vault, indices) = setState.value!
                    for _ in benchmark.scaledIterations {
                        let index = indices.next()
                        try! vault.set(secret, service: Bench.service(index), account: Bench.account(index))
                    }
                    setState.value = (vault, indices)
                },
                setup: {
                    let vault = try VaultFixture.withItems(count).open()
                    if guarded { try vault.useRollbackGuard(RollbackGuard(directory: Bench.scratchDirectory + "/rollback")) }
                    setState.value = (vault, IndexStream(bound: count, seed: 42))
                },
                teardown: { setState.value?.0.close(); setState.value = nil }
            )
        }
    }

    // MARK: Bulk import: N new items in one batch (one transaction, one durable commit)

    for count in Bench.isQuick ? [1_000] : [10_000, 100_000] {
        Benchmark(
            "bulk import \(Bench.countLabel(count)) items in one batch",
            configuration: Bench.configuration(
                maxDuration: .seconds(count >= 100_000 ? 15 : 5), maxIterations: count >= 100_000 ? 5 : 20, warmup: 1,
                metrics: Bench.metrics + [Bench.itemsPerSecond]
            )
        ) { benchmark in
            let path = Bench.newPath("import")
            let vault = try! Vault.create(at: path, key: VaultKey.random())
            defer {
                vault.close()
                Bench.remove(path)
            }
            Bench.measureBulkImport(benchmark, into: vault, count: count, secret: secret)
        }
    }

    // MARK: Listing

    let largest = Bench.largestItemCount
    let listState = Shared<Vault>()
    let listSetup: Benchmark.BenchmarkSetupHook = {
        listState.value = try VaultFixture.withItems(largest).open()
    }
    let listTeardown: Benchmark.BenchmarkTeardownHook = { listState.value?.close(); listState.value = nil }
    Benchmark(
        "list one service (\(largest / 100) items) @\(Bench.countLabel(largest))",
        configuration: Bench.configuration(maxDuration: .seconds(3), maxIterations: 200),
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! listState.value!.items(service: Bench.service(7)))
            }
        },
        setup: listSetup, teardown: listTeardown
    )
    // The whole-vault check (`vault verify`): every row against the manifest, then
    // every record opened, as the listing of all items does.
    Benchmark(
        "verify @\(Bench.countLabel(largest))",
        configuration: Bench.configuration(maxDuration: .seconds(5), maxIterations: 20, warmup: 1),
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! listState.value!.verify())
            }
        },
        setup: listSetup, teardown: listTeardown
    )
    Benchmark(
        "list all items @\(Bench.countLabel(largest))",
        configuration: Bench.configuration(maxDuration: .seconds(5), maxIterations: 20, warmup: 1),
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! listState.value!.items())
            }
        },
        setup: listSetup, teardown: listTeardown
    )
}


/// A 4 KiB block rewritten and fsynced: what one durable commit cannot go below.
final class FsyncFloor {
    private let fd: Int32
    private let block = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
    private var offset: off_t = 0
    private let dataOnly: Bool

    init(path: String, dataOnly: Bool = false) {
        self.dataOnly = dataOnly
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot open \(path): errno \(errno)")
        block.initializeMemory(as: UInt8.self, repeating: 0x42, count: 4096)
    }

    deinit {
        close(fd)
        block.deallocate()
    }

    /// Like a WAL append: the next 4 KiB block of a file that cycles through 1 MiB.
    func writeAndSync() {
        precondition(pwrite(fd, block, 4096, offset) == 4096)
        precondition((dataOnly ? fdatasync(fd) : fsync(fd)) == 0)
        offset = (offset + 4096) % (1024 * 1024)
    }
}
