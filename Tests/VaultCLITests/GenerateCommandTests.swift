import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault generate`: random secrets that go into the vault without being shown.
@Suite(.offCooperativePool) struct GenerateCommandTests {
    @Test func generatingIntoAnItemStoresItAndWritesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("generate", "db.internal", "app", "--length", "32")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
        let stored = try cli.run("get", "db.internal", "app").stdout.dropLast()
        #expect(stored.count == 32)
    }

    @Test func printWritesExactlyWhatWasStored() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("generate", "svc", "acct", "--print")
        #expect(result.status == 0)
        #expect(result.stdout.count == 25)
        #expect(try cli.run("get", "svc", "acct").stdout == result.stdout)
    }

    @Test func anExistingItemIsKeptUnlessReplaceIsGiven() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "keep me")
        let refused = try cli.run("generate", "svc", "acct")
        #expect(refused.status == 45)
        #expect(try cli.run("get", "svc", "acct").stdout == "keep me\n")
        #expect(try cli.run("generate", "svc", "acct", "--replace").status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout != "keep me\n")
    }

    @Test func passwordsUseOnlyTheChosenClassesAndEachOfThem() throws {
        let cli = CLI()
        let lower = Set("abcdefghijklmnopqrstuvwxyz"), digits = Set("0123456789")
        for _ in 0..<20 {
            let result = try cli.run(["generate", "--length", "4", "--classes", "lower,digits,upper,symbols"], vault: false)
            let password = result.stdout.dropLast()
            #expect(password.count == 4)
            #expect(password.contains(where: lower.contains) && password.contains(where: digits.contains))
            #expect(password.contains(where: \.isUppercase) && password.contains(where: { "!#$%&()*+,-./:;<=>?@[]^_{}~".contains($0) }))
        }
        let onlyDigits = try cli.run(["generate", "--length", "1000", "--classes", "digits"], vault: false).stdout.dropLast()
        #expect(onlyDigits.allSatisfy(digits.contains))
        // Every digit turns up in 1000 draws (a miss has probability about 10^-45).
        #expect(Set(onlyDigits) == digits)
    }

    @Test func passphrasesArePronounceableWordsWithTheirEntropyReported() throws {
        let cli = CLI()
        let result = try cli.run(["generate", "--words", "5", "--separator", ".", "--verbose"], vault: false)
        #expect(result.status == 0)
        let words = result.stdout.dropLast().split(separator: ".", omittingEmptySubsequences: false)
        #expect(words.count == 5)
        for word in words {
            #expect(word.count == 6)
            for (index, letter) in word.enumerated() {
                #expect((index.isMultiple(of: 2) ? "bdfghjklmnprstvz" : "aeiou").contains(letter), "\(word)")
            }
        }
        // 5 words x 3 syllables x log2(16 x 5) bits.
        #expect(result.stderr == "vault: entropy 94.8 bits\n")
        // 10^4 digit strings: 13.3 bits; with every class required the count is smaller than 94^n.
        #expect(try cli.run(["generate", "--length", "4", "--classes", "digits", "--verbose"], vault: false).stderr == "vault: entropy 13.3 bits\n")
        #expect(try cli.run(["generate", "--length", "4", "--classes", "lower,digits", "--verbose"], vault: false).stderr == "vault: entropy 20.2 bits\n")
    }

    @Test(arguments: [
        ["generate", "svc"],
        ["generate", "--length", "3"],
        ["generate", "--length", "5000"],
        ["generate", "--words", "0"],
        ["generate", "--words", "3", "--length", "10"],
        ["generate", "--classes", "lower,emoji"],
        ["generate", "--separator", "-"],
        ["generate", "--replace"],
    ])
    func badOptionsAreUsageErrors(arguments: [String]) throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run(arguments)
        #expect(result.status == 2)
        #expect(result.isOneErrorLine, "\(result.stderr)")
    }
}
