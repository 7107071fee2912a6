import Testing
import Foundation
@testable import VaultKit

@Test func smoke() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
    let path = dir + "/a/b.vault"
    let kdf = try KDFParameters(opsLimit: 1, memoryLimit: 8192)
    let v = try Vault.create(at: path, passphrase: "pw", kdf: kdf)
    try v.set("s3cr3t", service: "svc", account: "alice", label: "L", generic: Data([1,2]))
    #expect(try v.string(service: "svc", account: "alice") == "s3cr3t")
    try v.set("two", service: "svc", account: "alice")
    let item = try v.item(service: "svc", account: "alice")
    #expect(item.label == "L")
    #expect(try v.items().count == 1)
    v.close()
    let w = try Vault.open(at: path, passphrase: "pw")
    #expect(try w.string(service: "svc", account: "alice") == "two")
    #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "nope") }
    try w.rekey()
    #expect(try w.string(service: "svc", account: "alice") == "two")
    try w.changePassphrase(to: "new", kdf: kdf)
    w.close()
    let x = try Vault.open(at: path, passphrase: "new")
    #expect(try x.string(service: "svc", account: "alice") == "two")
}
