// Helper for vault-get-process.sh and peers.sh (not a suite):
//
//     VaultFixtureTool create PATH COUNT   # passphrase $VAULT_PASSPHRASE, interactive KDF
//     VaultFixtureTool open PATH RUNS      # median in-process Vault.open (= the KDF + open), ms
//     VaultFixtureTool import-raw PATH N   # a raw-key vault (fixed test key) filled with N items
//     VaultFixtureTool get-raw PATH N      # N gets from it, for callgrind
//     VaultFixtureTool first-get-raw PATH N  # N times: open, one get (verifies the manifest root and a bucket), close
//
// Items are named like the suites' fixtures: service svcN.example.com (N = i % 100), account userI.
import BenchmarkFixtures
import Foundation
import VaultKit

let arguments = CommandLine.arguments
let passphrase = ProcessInfo.processInfo.environment["VAULT_PASSPHRASE"] ?? ""
guard arguments.count == 4, let number = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: VAULT_PASSPHRASE=... VaultFixtureTool create PATH COUNT | open PATH RUNS\n".utf8))
    exit(2)
}
let path = arguments[2]
switch arguments[1] {
case "create":
    let vault = try Vault.create(at: path, passphrase: passphrase, kdf: .interactive)
    try VaultFixture.fill(vault, range: 0..<number)
    vault.close()
case "open":
    var times: [Double] = []
    for _ in 0..<number {
        let start = ContinuousClock.now
        let vault = try Vault.open(at: path, passphrase: passphrase)
        let elapsed = ContinuousClock.now - start
        vault.close()
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
    }
    print(String(format: "%.1f", times.sorted()[times.count / 2]))
case "import-raw":
    let vault = try Vault.create(at: path, key: testKey)
    try VaultFixture.fill(vault, range: 0..<number)
    vault.close()
case "first-get-raw":
    var indices = IndexStream(bound: 1_000)
    for _ in 0..<number {
        let vault = try Vault.open(at: path, key: testKey)
        let index = indices.next()
        _ = try vault.secret(service: Bench.service(index), account: Bench.account(index))
        vault.close()
    }
case "get-raw":
    let vault = try Vault.open(at: path, key: testKey)
    var indices = IndexStream(bound: 100_000)
    var total = 0
    for _ in 0..<number {
        let index = indices.next()
        total &+= try vault.secret(service: Bench.service(index), account: Bench.account(index)).count
    }
    print(total)
default:
    exit(2)
}

/// A fixed key, for probes only: the vaults it opens hold nothing but test data.
var testKey: VaultKey { try! VaultKey(Data(repeating: 7, count: VaultKey.byteCount)) }
