// The async twins' cost and its floor: `get async` beside the blocking `get` (Items.swift),
// the same hand-off with no vault work in it, and a bare continuation + dispatch round
// trip, so one run shows how much of an async call is the hop and how much of the hop is
// the platform's thread hand-off.
import Benchmark
import BenchmarkFixtures
import Dispatch
@_spi(Benchmarking) import VaultKit

/// The floors, independent of the vault's size: one run each per `get @N` run.
func asyncHopFloorBenchmarks() {
    // The least an await on another thread costs: the task parks, a dispatch queue
    // resumes it at once. Beside the next one it shows what the twins' plumbing adds.
    let queue = DispatchQueue(label: "async-hop-floor")
    Benchmark(
        "async hop floor: continuation + DispatchQueue.async",
        configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(2))
    ) { benchmark async in
        for _ in benchmark.scaledIterations {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                queue.async { continuation.resume() }
            }
        }
    }

    // The async twins' own hand-off to the vault's queue and back, running nothing there.
    asyncVaultBenchmark("async hop floor: vault queue, no work", count: Bench.itemCounts[0]) { benchmark, vault in
        for _ in benchmark.scaledIterations { await vault.benchmarkEmptyHop() }
    }
}

/// `get async @N`, alone, from a task on the vault's executor, and from eight tasks at
/// once, on a vault of `count` items.
func asyncGetBenchmarks(count: Int) {
    let label = Bench.countLabel(count)

    // The same reads as "get @N" through the async twin: each hops to the vault's queue
    // and back. Beside "get", it shows what the hop costs (the target: <= 1.15x).
    asyncReadBenchmark("get async @\(label)", count: count) { benchmark, vault, indices in
        await readItems(benchmark.scaledIterations.count, of: vault, at: indices)
    }

    // The same reads from a task running on the vault's own queue (`Vault.executor`):
    // the twin finds itself there and reads inline, with no hop. Beside "get" it shows
    // what is left of the async cost: the twin's check and its typed-throws plumbing.
    asyncReadBenchmark("get async on the vault's executor @\(label)", count: count) { benchmark, vault, indices in
        await withTaskExecutorPreference(vault.executor) {
            precondition(vault.benchmarkIsOnExecutor, "not on the vault's executor: this would measure the hop")
            return await readItems(benchmark.scaledIterations.count, of: vault, at: indices)
        }
    }

    // Eight tasks awaiting reads on one vault at once (a server's handlers): the hops
    // overlap with other reads, so the time per read approaches the read itself.
    // Wall time per read: the iteration's 1,000 reads, 125 per task.
    asyncVaultBenchmark("get async, 8 tasks @\(label)", count: count) { benchmark, vault in
        let tasks = 8
        let perTask = max(1, benchmark.scaledIterations.count / tasks)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var indices = IndexStream(bound: count, seed: UInt64(task + 1))
                    for _ in 0..<perTask {
                        let index = indices.next()
                        blackHole(try! await vault.secret(service: Bench.service(index), account: Bench.account(index)))
                    }
                }
            }
        }
    }
}

/// Reads `reads` pseudo-random items through the async twin; returns where the stream is.
func readItems(_ reads: Int, of vault: Vault, at start: IndexStream) async -> IndexStream {
    var indices = start
    for _ in 0..<reads {
        let index = indices.next()
        blackHole(try! await vault.secret(service: Bench.service(index), account: Bench.account(index)))
    }
    return indices
}

/// An async benchmark of reads on one vault of `count` items, opened in setup and kept
/// across iterations; each iteration goes on with the previous one's index stream.
func asyncReadBenchmark(_ name: String, count: Int, _ body: @escaping @Sendable (Benchmark, Vault, IndexStream) async -> IndexStream) {
    let state = Shared<(Vault, IndexStream)>()
    Benchmark(
        name,
        configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(2)),
        closure: { benchmark async in
            let (vault, indices) = state.value!
            state.value = (vault, await body(benchmark, vault, indices))
        },
        setup: {
            let fixture = try VaultFixture.withItems(count)
            state.value = (try fixture.open(), IndexStream(bound: count))
        },
        teardown: { state.value?.0.close(); state.value = nil }
    )
}

/// An async benchmark on one vault of `count` items, opened in setup and kept across
/// iterations (as a server keeps it), closed in teardown.
func asyncVaultBenchmark(_ name: String, count: Int, _ body: @escaping @Sendable (Benchmark, Vault) async -> Void) {
    let state = Shared<Vault>()
    Benchmark(
        name,
        configuration: Bench.configuration(scaling: .kilo, maxDuration: .seconds(2)),
        closure: { benchmark async in await body(benchmark, state.value!) },
        setup: { state.value = try VaultFixture.withItems(count).open() },
        teardown: { state.value?.close(); state.value = nil }
    )
}
