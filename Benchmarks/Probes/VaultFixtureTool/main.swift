// Helper for vault-get-process.sh and peers.sh (not a suite):
//
//     VaultFixtureTool create PATH COUNT   # passphrase $VAULT_PASSPHRASE, interactive KDF
//     VaultFixtureTool create-kdf PATH COUNT OPSLIMIT MEMLIMIT  # the same at a given Argon2id cost
//     VaultFixtureTool open PATH RUNS      # median in-process Vault.open (= the KDF + open), ms
//     VaultFixtureTool import-raw PATH N   # a raw-key vault (fixed test key) filled with N items
//     VaultFixtureTool get-raw PATH N      # N gets from it, for callgrind
//     VaultFixtureTool list-raw PATH N     # N times: open, list every item, close (for callgrind)
//     VaultFixtureTool first-get-raw PATH N  # N times: open, one get (verifies the manifest root and a bucket), close
//
// Items are named like the suites' fixtures: service svcN.example.com (N = i % 100), account userI.
import BenchmarkFixtures
import Foundation
import VaultKit

let arguments = CommandLine.arguments
let passphrase = ProcessInfo.processInfo.environment["VAULT_PASSPHRASE"] ?? ""
guard arguments.count == 4 || (arguments.count == 6 && arguments[1] == "create-kdf"), let number = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: VAULT_PASSPHRASE=... VaultFixtureTool create PATH COUNT | open PATH RUNS\n".utf8))
    exit(2)
}
let path = arguments[2]
switch arguments[1] {
case "create":
    let vault = try Vault.create(at: path, passphrase: passphrase, kdf: .interactive)
    try VaultFixture.fill(vault, range: 0..<number)
    vault.close()
case "create-kdf":
    // peers.sh: the CLI's default (moderate) and a cost equal to the other tools' KDF.
    guard let opsLimit = UInt64(arguments[4]), let memoryLimit = Int(arguments[5]) else { exit(2) }
    let vault = try Vault.create(at: path, passphrase: passphrase, kdf: try KDFParameters(opsLimit: opsLimit, memoryLimit: memoryLimit))
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
case "list-raw":
    var total = 0
    for _ in 0..<number {
        let vault = try Vault.open(at: path, key: testKey)
        total &+= try vault.items().count
        vault.close()
    }
    print(total)
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
