import Foundation
import Testing
import TestTraits
import VaultKit

/// The library example of README.md and of the VaultKit DocC overview, run as written
/// (with a temporary path), so the documentation stays true.
@Suite(.offCooperativePool) struct ReadmeExampleTests {
    @Test func theServiceHandleAndValuesExampleRuns() throws {
        let (vault, _) = try Fixtures.passphraseVault()

        // One service's items by account, and Codable values in a versioned encoding:
        struct Login: Codable { var user: String; var token: String; var expires: Date }
        let api = vault.service("api.example.com")
        try api.setValue(Login(user: "bob", token: "t0k3n", expires: .now + 3600), account: "bob")
        let login = try api.value(Login.self, account: "bob")                 // Login(user: "bob", ...)
        if let entry = try api.entry(account: "carol") { print(entry.item.modified) }   // nil: no such item

        #expect(login.user == "bob" && login.token == "t0k3n")
        #expect(try api.entry(account: "carol") == nil)
    }

    @Test func theDocCOverviewExampleRuns() throws {
        let (vault, _) = try Fixtures.passphraseVault()

        struct Login: Codable { var user: String; var token: String }
        let api = vault.service("api.example.com")
        try api.setValue(Login(user: "alice", token: "t0k3n"), account: "alice")
        let login = try api.value(Login.self, account: "alice")
        let missing = try api.entry(account: "bob")   // nil: no such item

        #expect(login.token == "t0k3n")
        #expect(missing == nil)
    }

    /// The errors example (README and DocC overview alike), on an open vault and on a
    /// closed one, whose error it handles rather than rethrows.
    @Test func theErrorsExampleRuns() throws {
        for closed in [false, true] {
            let (vault, _) = try Fixtures.passphraseVault()
            if closed { vault.close() }

        do {
            _ = try vault.verify()
        } catch VaultError.closed {                                 // a whole error, as with an enum
            print("the vault is closed: open it again")
        } catch {
            switch error.code {                                     // or its code: keep a default
            case .tampered where error.reason == .rowsChanged: print(error)
            case .io: print("errno", error.errno ?? 0)
            default: throw error
            }
        }
        }
    }
}
