// A separate OS process that writes to a vault, so tests can run several writers at
// once and kill one with SIGKILL mid-stream. It acknowledges each write on stdout only
// after the call returned, which is the moment VaultKit promises durability.
//
//   vault-test-writer write     VAULT KEYFILE PREFIX COUNT   set svc/PREFIX-i = v-PREFIX-i, print "ack i"
//   vault-test-writer hold-lock VAULT KEYFILE SECONDS        hold the write lock, print "locked"
//   vault-test-writer passwd-loop VAULT KEYFILE              change the passphrase to "pass-i", print "ack i"
//   vault-test-writer rekey-loop VAULT KEYFILE               re-key over and over, print "ack i"
//
// The key comes from a file, never from argv.
import Foundation
import VaultKit

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

do {
    guard let keyData = FileManager.default.contents(atPath: keyFile) else { fail("cannot read \(keyFile)") }
    let vault = try Vault.open(at: path, key: VaultKey(keyData), busyTimeout: .seconds(60))
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
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
