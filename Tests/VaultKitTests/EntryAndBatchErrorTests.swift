import Foundation
import Testing
import TestTraits
import VaultKit

/// The one optional read, its deprecated tuple spelling, and `batch` giving back the
/// caller's own error unchanged.
@Suite(.offCooperativePool) struct EntryAndBatchErrorTests {
    @Test func entryIsNilForAMissingItemAndThrowsEverythingElse() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        #expect(try vault.entry(service: "s", account: "a") == nil)
        try vault.set("x", service: "s", account: "a", label: "L")
        let entry = try #require(try vault.entry(service: "s", account: "a"))
        #expect(try entry.string() == "x")
        #expect(entry.data() == Data("x".utf8))
        #expect(entry.item.label == "L")
        #expect(throws: VaultError.invalidArgument(.emptyService)) { try vault.entry(service: "", account: "a") }
        try vault.set(Data([0xFF]), service: "s", account: "binary")
        #expect(throws: VaultError.secretNotUTF8) { try vault.entry(service: "s", account: "binary")?.string() }
        vault.close()
        #expect(throws: VaultError.closed) { try vault.entry(service: "s", account: "a") }
        #expect(throws: VaultError.closed) { try vault.contains(service: "s", account: "a") }
    }

    @available(*, deprecated)
    @Test func theTupleSpellingStillWorks() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("s3cr3t", service: "s", account: "a", label: "L")
        let (item, secret) = try vault.itemWithSecret(service: "s", account: "a")
        #expect(item.label == "L" && secret == SecretBytes("s3cr3t"))
        #expect(throws: VaultError.itemNotFound) { try vault.itemWithSecret(service: "s", account: "b") }
    }

    struct CallerError: Error, Equatable {
        var code: Int
        var detail: String
    }

    @Test func theCallersOwnErrorComesBackUnchangedAndNothingIsWritten() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("kept", service: "s", account: "existing")
        #expect(throws: CallerError(code: 42, detail: "quota")) {
            try vault.batch { batch in
                try batch.set("v", service: "s", account: "new")
                throw CallerError(code: 42, detail: "quota")
            }
        }
        // A VaultError the caller throws itself is its own too: no case is substituted.
        for own in [VaultError.invalidArgument(.batchRolledBack), .itemNotFound, .busy(path: "/elsewhere")] {
            #expect(throws: own) {
                try vault.batch { batch in
                    try batch.delete(service: "s", account: "existing")
                    throw own
                }
            }
        }
        #expect(try vault.items().map(\.account) == ["existing"])
        #expect(try vault.string(service: "s", account: "existing") == "kept")
    }

    @Test func aBatchReturnsWhatItsBodyReturns() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let written = try vault.batch { batch in
            for account in ["a", "b", "c"] { try batch.set("v", service: "s", account: account) }
            return 3
        }
        #expect(written == 3)
        #expect(try vault.items().count == 3)
    }
}
