// Seal and open of one item record through VaultKit, and in the same run the raw
// libsodium calls a careful hand-written caller would make, so the overhead is a ratio.
//
// "raw seal" = randombytes_buf (fresh 24-byte nonce) + crypto_secretbox_easy of the
// secret alone into a preallocated buffer; "raw open" = crypto_secretbox_open_easy into
// a preallocated buffer. VaultKit's seal also encodes the record (service, account,
// flags, timestamps, secret) and allocates the sealed output (and the 24-byte nonce array);
// its open decodes the record and checks it holds the names its row was looked up by.
// The index hashes a write adds (row key, service tag) are timed on their own.
import Benchmark
import BenchmarkFixtures
import CSodiumRaw
import Foundation
@_spi(Benchmarking) import VaultKit

let benchmarks: @Sendable () -> Void = {
    precondition(sodium_init() >= 0)

    // What a write computes besides the seal, whatever the size: the row key and the
    // service tag (one keyed BLAKE2b each), so seal + index = a write's crypto.
    let indexSealer = try! BenchmarkRecordSealer()
    Benchmark("index hashes (lookup id + service tag)", configuration: Bench.configuration(scaling: .kilo, timeUnits: .nanoseconds)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(indexSealer.index(service: "api.example.com", account: "alice"))
        }
    }
    for size in Bench.secretSizes {
        let label = Bench.byteLabel(size)
        // Enough inner iterations that one sample is well above the clock's resolution.
        let scaling: BenchmarkScalingFactor = size <= 1024 ? .kilo : .one
        let config = Bench.configuration(scaling: scaling, maxDuration: .seconds(2), timeUnits: .nanoseconds)

        // MARK: VaultKit

        let sealer = try! BenchmarkRecordSealer()
        let item = VaultItem(service: "api.example.com", account: "alice", created: Date(), modified: Date())
        let secret = SecretBytes([UInt8](repeating: 0xA5, count: size))
        let index = sealer.index(service: item.service, account: item.account)

        Benchmark("seal VaultKit \(label)", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(sealer.seal(item, secret: secret, index: index))
            }
        }

        let sealedRecord = sealer.seal(item, secret: secret, index: index)
        Benchmark("open VaultKit \(label)", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! sealer.open(sealedRecord, index: index))
            }
        }

        // MARK: Interleaved ratio

        // The two sides alternate in blocks inside one benchmark, so a burst of load from
        // other processes hits both: the ratio is what the targets are about, and on a
        // shared machine separate benchmarks minutes apart do not give a stable one.
        let ratioRaw = RawSecretBox(plaintextCount: size)
        let block = size <= 1024 ? 200 : (size <= 64 * 1024 ? 10 : 1)
        for (operation, vaultKit, raw) in [
            ("seal", { blackHole(sealer.seal(item, secret: secret, index: index)) }, { ratioRaw.seal() }),
            ("open", { blackHole(try! sealer.open(sealedRecord, index: index)) }, { precondition(ratioRaw.open()) }),
        ] as [(String, () -> Void, () -> Void)] {
            ratioRaw.seal()
            Benchmark(
                "\(operation) ratio VaultKit/raw \(label)",
                configuration: Bench.configuration(
                    maxDuration: .seconds(2), maxIterations: 2_000,
                    metrics: [.custom("VaultKit ns/op", useScalingFactor: false), .custom("raw ns/op", useScalingFactor: false),
                              .custom("ratio x1000", useScalingFactor: false)],
                    timeUnits: .nanoseconds
                )
            ) { benchmark in
                let vaultKitTime = ContinuousClock().measure { for _ in 0..<block { vaultKit() } }
                let rawTime = ContinuousClock().measure { for _ in 0..<block { raw() } }
                let vaultKitNanos = nanoseconds(vaultKitTime) / Double(block)
                let rawNanos = nanoseconds(rawTime) / Double(block)
                benchmark.measurement(.custom("VaultKit ns/op", useScalingFactor: false), Int(vaultKitNanos))
                benchmark.measurement(.custom("raw ns/op", useScalingFactor: false), Int(rawNanos))
                benchmark.measurement(.custom("ratio x1000", useScalingFactor: false), Int(1000 * vaultKitNanos / rawNanos))
            }
        }

        // MARK: Raw libsodium

        let raw = RawSecretBox(plaintextCount: size)
        Benchmark("seal raw libsodium \(label)", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                raw.seal()
            }
        }

        raw.seal()
        Benchmark("open raw libsodium \(label)", configuration: config) { benchmark in
            for _ in benchmark.scaledIterations {
                precondition(raw.open())
            }
        }
    }
}

/// Buffers for the raw calls, allocated once so the baseline is the cryptography alone.
final class RawSecretBox: @unchecked Sendable {
    let plaintextCount: Int
    let key = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_secretbox_KEYBYTES))
    let nonce = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_secretbox_NONCEBYTES))
    let plaintext: UnsafeMutablePointer<UInt8>
    let sealed: UnsafeMutablePointer<UInt8>

    init(plaintextCount: Int) {
        self.plaintextCount = plaintextCount
        plaintext = .allocate(capacity: plaintextCount)
        plaintext.initialize(repeating: 0xA5, count: plaintextCount)
        sealed = .allocate(capacity: plaintextCount + Int(crypto_secretbox_MACBYTES))
        crypto_secretbox_keygen(key)
    }

    @inline(never)
    func seal() {
        randombytes_buf(nonce, Int(crypto_secretbox_NONCEBYTES))
        _ = crypto_secretbox_easy(sealed, plaintext, UInt64(plaintextCount), nonce, key)
    }

    @inline(never)
    func open() -> Bool {
        crypto_secretbox_open_easy(plaintext, sealed, UInt64(plaintextCount) + UInt64(crypto_secretbox_MACBYTES), nonce, key) == 0
    }
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}
