import Foundation
import Logging
import VaultKit
import VaultProfile

/// Times what the seed's author feared: encrypting the profile on every change, and
/// reading it back at launch. Prints the median and 90th percentile of `runs` runs, in
/// microseconds, for a ~1 KiB JSON profile in a vault on the disk of `directory`.
enum Measurement {
    static func run(runs: Int, directory: String?) async throws {
        let base = directory ?? FileManager.default.currentDirectoryPath
        let folder = "\(base)/profile-measure-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/measure.vault"
        let key = VaultKey.random()
        let vault = try await Vault.create(at: path, key: key)
        let service = "measure.profile"
        let profile = DemoProfile.typical(nickname: "alice")
        let size = try JSONEncoder().encode(profile).count
        print("profile JSON: \(size) bytes; runs: \(runs); vault: \(folder)")

        // 1. The store's whole write path: update, then persist() (JSON encoding,
        //    sealing, one SQLite transaction committed with synchronous=FULL).
        let quiet = Logger(label: "VaultProfile", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = ProfileStore<DemoProfile>(vault: vault, service: service, configuration: ProfileStoreConfiguration(debounce: .seconds(3600)), logger: quiet)
        try await store.start(account: "alice")
        try await store.replace(with: profile)
        try await store.persist()
        var persist: [Duration] = []
        for run in 0..<runs {
            try await store.update { $0.followers = run }
            let start = ContinuousClock.now
            try await store.persist()
            persist.append(ContinuousClock.now - start)
        }
        try await store.shutdown()

        // 2. Loading at launch from an open vault: a new store reads, opens and decodes the snapshot.
        var load: [Duration] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            let fresh = ProfileStore<DemoProfile>(vault: vault, service: service, logger: quiet)
            let result = try await fresh.start(account: "alice")
            load.append(ContinuousClock.now - start)
            guard case .loaded = result else { throw DemoError("measurement: snapshot not loaded") }
        }
        await vault.close()

        // 3. Cold start with a raw key: open the vault file, then load.
        var coldLoad: [Duration] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            let reopened = try await Vault.open(at: path, key: key)
            let fresh = ProfileStore<DemoProfile>(vault: reopened, service: service, logger: quiet)
            _ = try await fresh.start(account: "alice")
            coldLoad.append(ContinuousClock.now - start)
            await reopened.close()
        }

        report("persist (update + persist(), durable)", persist)
        report("load at start (open vault)", load)
        report("open vault with key + load", coldLoad)
    }

    private static func report(_ name: String, _ samples: [Duration]) {
        let micros = samples.map { Double($0.components.seconds) * 1e6 + Double($0.components.attoseconds) / 1e12 }.sorted()
        let median = micros[micros.count / 2]
        let p90 = micros[min(micros.count - 1, micros.count * 9 / 10)]
        print("\(name): median \(String(format: "%.0f", median)) µs, p90 \(String(format: "%.0f", p90)) µs")
    }
}
