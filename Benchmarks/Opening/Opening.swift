// Opening a vault: with a raw key at 1,000 / 10,000 / 100,000 items (must not grow with
// the vault: no scan at open), and with a passphrase at each Argon2id preset, where the
// KDF dominates.
import Benchmark
import BenchmarkFixtures
import Foundation
import VaultKit

let benchmarks: @Sendable () -> Void = {
    // MARK: Raw key

    for count in Bench.itemCounts {
        Benchmark(
            "open with raw key @\(Bench.countLabel(count))",
            configuration: Bench.configuration(maxDuration: .seconds(2), maxIterations: 2_000),
            closure: { benchmark in
                let fixture = try! VaultFixture.withItems(count)
                benchmark.startMeasurement()
                let vault = try! fixture.open()
                benchmark.stopMeasurement()
                // Closing (a WAL checkpoint, nothing to do here) is not part of opening.
                vault.close()
            },
            setup: { _ = try VaultFixture.withItems(count) }
        )
    }

    // MARK: Raw key, then the first read

    // What a short-lived process pays before its first answer: opening, then a get that
    // verifies the manifest root (one row per non-empty bucket, at most 1,024) and the
    // bucket of the item it reads (about n/1,024 rows).
    for count in Bench.itemCounts {
        Benchmark(
            "open with raw key + first get @\(Bench.countLabel(count))",
            configuration: Bench.configuration(maxDuration: .seconds(2), maxIterations: 2_000),
            closure: { benchmark in
                let fixture = try! VaultFixture.withItems(count)
                let index = Int.random(in: 0..<count)
                benchmark.startMeasurement()
                let vault = try! fixture.open()
                blackHole(try! vault.secret(service: Bench.service(index), account: Bench.account(index)))
                benchmark.stopMeasurement()
                vault.close()
            },
            setup: { _ = try VaultFixture.withItems(count) }
        )
    }

    // MARK: Passphrase, per preset

    let presets: [(String, KDFParameters, Int)] = Bench.isQuick
        ? [("interactive", .interactive, 3)]
        : [("interactive", .interactive, 30), ("moderate", .moderate, 10), ("sensitive", .sensitive, 3)]
    for (name, kdf, iterations) in presets {
        let path = Shared<String>()
        Benchmark(
            "open with passphrase, \(name) KDF",
            configuration: Bench.configuration(maxDuration: .seconds(30), maxIterations: iterations, warmup: 1),
            closure: { benchmark in
                benchmark.startMeasurement()
                let vault = try! Vault.open(at: path.value!, passphrase: "correct horse battery staple")
                benchmark.stopMeasurement()
                vault.close()
            },
            setup: {
                let created = Bench.newPath("kdf-\(name)")
                let vault = try Vault.create(at: created, passphrase: "correct horse battery staple", kdf: kdf)
                try VaultFixture.fill(vault, range: 0..<100)
                vault.close()
                path.value = created
            },
            teardown: { path.value.map(Bench.remove) }
        )
    }
}
