// A separate OS process that writes to a vault, so tests can run several writers at
// once and kill one with SIGKILL mid-stream. It acknowledges each write on stdout only
// after the call returned, which is the moment VaultKit promises durability.
//
//   vault-test-writer write     VAULT KEYFILE PREFIX COUNT   set svc/PREFIX-i = v-PREFIX-i, print "ack i"
//   vault-test-writer hold-lock VAULT KEYFILE SECONDS        hold the write lock, print "locked"
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
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
