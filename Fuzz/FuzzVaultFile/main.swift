// libFuzzer target: arbitrary bytes as a whole vault file.
//
// Opens the bytes as a vault with a fixed key, reads everything it can, verifies the
// whole manifest and writes one item (through the manifest update path). Only typed
// VaultErrors may come out: no crash, no hang (the busy timeout is short), and never
// an item whose record did not authenticate. The seeds include format-1 vaults
// (seed-N.vault, refused unless upgraded explicitly), format-2 ones (seed-v2-N.vault,
// verified and upgraded when opened), format-3 ones (seed-v3-N.vault, upgraded to 4) and
// format-4 ones with a kept version (seed-v4-N.vault).
import Foundation
import FuzzSupport
@testable import VaultKit

/// The key the seed vaults were created with (`Fuzz/run.sh --make-seeds`).
let fuzzKey = try! VaultKey(Data((1...32).map { UInt8($0) }))
/// In a private directory: VaultKit refuses a vault in one others can write, like /dev/shm itself.
let fuzzDirectory: String = {
    var template = Array("/dev/shm/vaultkit-fuzz-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}()
let fuzzPath = "\(fuzzDirectory)/fuzz.vault"

func fuzzVaultFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    for suffix in ["", "-wal", "-shm", "-journal"] { unlink(fuzzPath + suffix) }
    let contents = data.map { Data(bytes: $0, count: size) } ?? Data()
    _ = FileManager.default.createFile(atPath: fuzzPath, contents: contents, attributes: [.posixPermissions: 0o600])
    do {
        let vault = try Vault.open(at: fuzzPath, key: fuzzKey, busyTimeout: .milliseconds(10))
        do {
            for item in try vault.items() {
                _ = try vault.secret(service: item.service, account: item.account)
            }
        } catch {}
        do { _ = try vault.verify() } catch {}
        try vault.set("fuzz", service: "svc0", account: "acct1")
    } catch is VaultError {
        // Expected for almost every input.
    } catch {
        fatalError("untyped error \(error)")
    }
    return 0
}

/// `VAULTKIT_FUZZ_MAKE_SEEDS=DIR`: write small valid vaults into DIR, then exit.
if let directory = ProcessInfo.processInfo.environment["VAULTKIT_FUZZ_MAKE_SEEDS"] {
    for (index, count) in [0, 1, 5].enumerated() {
        let path = "\(directory)/seed-v\(VaultHeader.currentFormatVersion)-\(index).vault"
        unlink(path)
        let vault = try! Vault.create(at: path, key: fuzzKey)
        for item in 0..<count {
            try! vault.set("secret \(item)", service: "svc\(item % 2)", account: "acct\(item)", label: item == 0 ? "label" : nil, generic: Data([UInt8(item)]))
        }
        // A kept version, so the seeds hold each kind of row the current format has.
        if count > 0 { try! vault.set("rotated", service: "svc0", account: "acct0") }
        vault.close()
    }
    exit(0)
}

exit(runFuzzer(fuzzVaultFile))
