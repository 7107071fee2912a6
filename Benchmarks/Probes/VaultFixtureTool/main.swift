// Helper for vault-get-process.sh and peers.sh (not a suite):
//
//     VaultFixtureTool create PATH COUNT   # passphrase $VAULT_PASSPHRASE, interactive KDF
//     VaultFixtureTool open PATH RUNS      # median in-process Vault.open (= the KDF + open), ms
//
// Items are named like the suites' fixtures: service svcN.example.com (N = i % 100), account userI.
import BenchmarkFixtures
import Foundation
import VaultKit

let arguments = CommandLine.arguments
guard arguments.count == 4, let number = Int(arguments[3]),
      let passphrase = ProcessInfo.processInfo.environment["VAULT_PASSPHRASE"] else {
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
default:
    exit(2)
}
