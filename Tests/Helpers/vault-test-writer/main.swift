// A separate OS process that writes to a vault, so tests can run several writers at
// once and kill one with SIGKILL mid-stream. It acknowledges each write on stdout only
// after the call returned, which is the moment VaultKit promises durability.
//
//   vault-test-writer write     VAULT KEYFILE PREFIX COUNT   set svc/PREFIX-i = v-PREFIX-i, print "ack i"
//   vault-test-writer hold-lock VAULT KEYFILE SECONDS        hold the write lock, print "locked"
//   vault-test-writer random-ops VAULT KEYFILE PREFIX SEED COUNT
//                                 random set/delete on accounts PREFIX-0..9 of service "stress",
//                                 print "ack set ACCOUNT VALUE" / "ack delete ACCOUNT" after each
//   vault-test-writer passwd-loop VAULT KEYFILE              change the passphrase to "pass-i", print "ack i"
//   vault-test-writer rekey-loop VAULT KEYFILE               re-key over and over, print "ack i"
//   vault-test-writer history-loop VAULT KEYFILE             set h/a = "v-i" over and over, keeping history,
//                                 print "ack i"
//   vault-test-writer open-list VAULT KEYFILE                open and list; print "items N", or the error as
//                                 "error io ERRNO" / "error other DESCRIPTION" (exit 0 either way)
//   vault-test-writer hold-shared-lock VAULT KEYFILE NAME    take the vault's shared lock NAME, print "locked",
//                                 hold it until killed
//   vault-test-writer mixed-ops VAULT KEYFILE PREFIX SEED COUNT
//                                 random set/add/update/delete on accounts PREFIX-0..5 of service "mixed",
//                                 and an `add` of "race"/r-i racing the other writers; prints each
//                                 acknowledged outcome (MixedOperation's lines)
//   vault-test-writer load-ops VAULT KEYFILE WORKER ROUND SEED COUNT
//                                 random set/add/update/delete/get on shared and WORKER's private
//                                 accounts, logging each intent before and each outcome after the
//                                 call (LoadOperation's lines)
//
// VAULT is a file path, a URL of a registered engine (postgres://...#NAME), or `pg:NAME`
// for the vault NAME in the PostgreSQL database of $VAULTKIT_TEST_POSTGRES_URL (its
// password from PGPASSFILE; with $VAULTKIT_TEST_READ_STANDBY_URL, gets may go to that
// hot standby). The key comes from a
// file, never from argv.
import Foundation
import VaultKit
import VaultKitPostgres
import TestSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("vault-test-writer: \(message)\n".utf8))
    exit(1)
}

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: vault-test-writer MODE VAULT KEYFILE ...") }
let (mode, path, keyFile) = (arguments[1], arguments[2], arguments[3])

VaultEngines.register(.postgres)

/// Opens VAULT: a file, a URL of a registered engine, or `pg:NAME` in the test PostgreSQL database.
func openVault(key: VaultKey, busyTimeout: Duration = Vault.defaultBusyTimeout) throws(VaultError) -> Vault {
    if path.hasPrefix("pg:") {
        let environment = ProcessInfo.processInfo.environment
        guard let server = environment["VAULTKIT_TEST_POSTGRES_URL"] else { fail("VAULTKIT_TEST_POSTGRES_URL is not set") }
        // A worker given the standby's URL sends its gets there (within a minute's staleness).
        if let standby = environment["VAULTKIT_TEST_READ_STANDBY_URL"], !standby.isEmpty {
            let location = try PostgresVaultLocation(server, vaultName: String(path.dropFirst(3)))
            return try Vault.open(postgres: location.readingFromStandby(standby, maxStaleness: .seconds(60)), key: key, busyTimeout: busyTimeout)
        }
        return try Vault.open(url: server + "#" + path.dropFirst(3), key: key, busyTimeout: busyTimeout)
    }
    if VaultEngines.isEngineURL(path) { return try Vault.open(url: path, key: key, busyTimeout: busyTimeout) }
    return try Vault.open(at: path, key: key, busyTimeout: busyTimeout)
}

if mode == "open-list" {
    guard let keyData = FileManager.default.contents(atPath: keyFile) else { fail("cannot read \(keyFile)") }
    do throws(VaultError) {
        let vault = try openVault(key: VaultKey(keyData))
        emit("items \(try vault.items().count)")
    } catch let error where error.code == .io {
        emit("error io \(error.errno ?? 0)")
    } catch {
        emit("error other \(error)")
    }
    exit(0)
}

do {
    guard let keyData = FileManager.default.contents(atPath: keyFile) else { fail("cannot read \(keyFile)") }
    let vault = try openVault(key: VaultKey(keyData), busyTimeout: .seconds(60))
    switch mode {
    case "write":
        guard arguments.count == 6, let count = Int(arguments[5]) else { fail("write VAULT KEYFILE PREFIX COUNT") }
        let prefix = arguments[4]
        for index in 0..<count {
            try vault.set("v-\(prefix)-\(index)", service: "svc", account: "\(prefix)-\(index)")
            try vault.set("last-\(prefix)-\(index)", service: "shared", account: "last")
            emit("ack \(index)")
        }
    case "hold-lock":
        guard arguments.count == 5, let seconds = Double(arguments[4]) else { fail("hold-lock VAULT KEYFILE SECONDS") }
        try vault.batch { batch in
            try batch.set("held", service: "lock", account: "holder")
            emit("locked")
            Thread.sleep(forTimeInterval: seconds)
        }
        emit("released")
    case "random-ops":
        guard arguments.count == 7, let seed = UInt64(arguments[5]), let count = Int(arguments[6]) else {
            fail("random-ops VAULT KEYFILE PREFIX SEED COUNT")
        }
        var random = SplitMix64(seed: seed)
        for step in 0..<count {
            let account = "\(arguments[4])-\(random.next() % 10)"
            if random.next() % 4 == 0 {
                try vault.delete(service: "stress", account: account)
                emit("ack delete \(account)")
            } else {
                let value = "v\(step)-\(random.next() % 1000)"
                try vault.set(value, service: "stress", account: account)
                emit("ack set \(account) \(value)")
            }
        }
    case "mixed-ops":
        guard arguments.count == 7, let seed = UInt64(arguments[5]), let count = Int(arguments[6]) else {
            fail("mixed-ops VAULT KEYFILE PREFIX SEED COUNT")
        }
        var random = SplitMix64(seed: seed)
        for step in 0..<count {
            emit(try MixedOperation.random(prefix: arguments[4], step: step, using: &random).run(on: vault))
        }
    case "load-ops":
        guard arguments.count == 8, let worker = Int(arguments[4]), let round = Int(arguments[5]), let seed = UInt64(arguments[6]), let count = Int(arguments[7]) else {
            fail("load-ops VAULT KEYFILE WORKER ROUND SEED COUNT")
        }
        var random = SplitMix64(seed: seed)
        for step in 0..<count {
            try LoadOperation.random(worker: worker, round: round, step: step, using: &random).run(on: vault, log: emit)
        }
    case "hold-shared-lock":
        guard arguments.count == 5 else { fail("hold-shared-lock VAULT KEYFILE NAME") }
        guard let lock = try vault.sharedLock(named: arguments[4]) else { fail("this vault has no shared lock") }
        let held = try lock.acquire()
        emit("locked")
        while true { Thread.sleep(forTimeInterval: 3600) }
        held.release()
    case "passwd-loop":
        let cheap = try KDFParameters(opsLimit: 1, memoryLimit: 8 * 1024)
        for index in 0... {
            try vault.changePassphrase(to: "pass-\(index)", kdf: cheap)
            emit("ack \(index)")
        }
    case "rekey-loop":
        for index in 0... {
            try vault.rekey()
            emit("ack \(index)")
        }
    case "history-loop":
        for index in 0... {
            try vault.set("v-\(index)", service: "h", account: "a")
            emit("ack \(index)")
        }
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
