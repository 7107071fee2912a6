import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit
import VaultTransfer

/// `vault generate`: a new random secret that goes into the vault without being shown.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a random password or passphrase, and store it.",
        discussion: """
            With SERVICE and ACCOUNT the secret is stored as that item and nothing is \
            written (add --print to also write it); an existing item is kept unless \
            --replace is given (status 45). Without them the secret is only written.

            Passwords (default 24 characters) draw from the --classes given (default all: \
            lower, upper, digits, symbols !#$%&()*+,-./:;<=>?@[]^_{}~) and hold at least \
            one of each. --words N gives a passphrase instead: N pronounceable words of \
            three consonant-vowel syllables (16 x 5 = 80 syllables, 18.97 bits a word). \
            Every choice is libsodium's randombytes_uniform (unbiased). --verbose writes \
            the entropy in bits to standard error; 24 characters of all classes are about \
            154 bits, 5 words about 94.8.

            EXAMPLES:
              vault generate db.internal app --length 32
              vault generate wifi.home guest --words 4 --print
              vault generate --length 20 --classes lower,digits
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "Store the secret as this service's item (with ACCOUNT).")
    var service: String?

    @Argument(help: "The item's account.")
    var account: String?

    @Option(help: ArgumentHelp("Characters in a password (4 to 4096).", valueName: "n"))
    var length: Int?

    @Option(help: ArgumentHelp("Comma-separated character classes: lower, upper, digits, symbols.", valueName: "list"))
    var classes: String?

    @Option(help: ArgumentHelp("A passphrase of this many words (1 to 64) instead of a password.", valueName: "n"))
    var words: Int?

    @Option(help: ArgumentHelp("Between passphrase words. Default: -", valueName: "text"))
    var separator: String?

    @Flag(help: "Also write the secret (always written when no item is given).")
    var print = false

    @Flag(help: "Replace the item's secret if the item exists.")
    var replace = false

    @Flag(help: "Write the entropy in bits to standard error.")
    var verbose = false

    func validate() throws {
        if (service == nil) != (account == nil) { throw ValidationError("give both SERVICE and ACCOUNT, or neither") }
        if service?.isEmpty == true { throw ValidationError("the service must not be empty") }
        if words != nil && (length != nil || classes != nil) { throw ValidationError("--words cannot be used with --length or --classes") }
        if words == nil && separator != nil { throw ValidationError("--separator needs --words") }
        if let words, !(1...64).contains(words) { throw ValidationError("--words must be 1 to 64") }
        if let length, !(4...4096).contains(length) { throw ValidationError("--length must be 4 to 4096") }
        if service == nil && replace { throw ValidationError("--replace needs SERVICE and ACCOUNT") }
        _ = try characterClasses()
    }

    func run() throws {
        if let service, let account {
            let vault = try options.openVault()
            defer { vault.close() }
            let item = ItemNames(service: service, account: account)
            // Checked before generating; the write itself is still atomic (add vs set).
            if !replace, try vault.contains(service: service, account: account) { throw item.exists }
            let secret = try generate()
            do {
                if replace {
                    try vault.set(secret, service: service, account: account)
                } else {
                    try vault.add(secret, service: service, account: account)
                }
            } catch VaultError.duplicateItem {
                throw item.exists
            }
            if print { try write(secret) }
        } else {
            try write(try generate())
        }
    }

    private struct ItemNames {
        let service: String
        let account: String
        var exists: CLIError { .itemExists(service: service, account: account) }
    }

    private func generate() throws -> SecretBytes {
        let secret: SecretBytes
        let bits: Double
        if let words {
            secret = try PasswordGenerator.passphrase(words: words, separator: separator ?? "-")
            bits = PasswordGenerator.passphraseEntropy(words: words)
        } else {
            let length = length ?? 24
            let classes = try characterClasses()
            secret = try PasswordGenerator.password(length: length, classes: classes)
            bits = PasswordGenerator.passwordEntropy(length: length, classes: classes)
        }
        if verbose { Output.write("vault: entropy \(CFormat.oneDecimal(bits)) bits\n", to: STDERR_FILENO) }
        return secret
    }

    private func write(_ secret: SecretBytes) throws {
        var output = SecretBytes(reservingCapacity: secret.count + 1)
        output.append(contentsOf: secret)
        output.append(UInt8(ascii: "\n"))
        try Output.writeStandardOutput(output)
    }

    private func characterClasses() throws -> [PasswordGenerator.CharacterClass] {
        guard let classes else { return PasswordGenerator.CharacterClass.allCases }
        var result: [PasswordGenerator.CharacterClass] = []
        for name in classes.split(separator: ",", omittingEmptySubsequences: false) {
            guard let characterClass = PasswordGenerator.CharacterClass(rawValue: name.trimmingWhitespace()) else {
                throw ValidationError("--classes: unknown class \(Escaping.quoted(String(name))) (use lower, upper, digits, symbols)")
            }
            if !result.contains(characterClass) { result.append(characterClass) }
        }
        if let length, length < result.count { throw ValidationError("--length must be at least the number of classes") }
        return result
    }
}
