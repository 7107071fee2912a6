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

/// Docker's credential helper: `docker-credential-vault` (which Docker runs for
/// `"credsStore": "vault"`) execs `vault docker-credential ACTION`.
///
/// Items are service `docker:<normalized server URL>` (see ``DockerServerURL``), account =
/// username, secret = password or identity token (username `<token>`), generic data = the
/// server URL exactly as Docker sent it (what `list` reports). Errors follow upstream's
/// helpers: one line on standard output, status 1, with their exact wording where the
/// Docker CLI compares it.
struct DockerCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "Docker's credential helper (run by Docker as docker-credential-vault).",
        discussion: """
            Enable it with  "credsStore": "vault"  in ~/.docker/config.json (and put \
            docker-credential-vault on PATH next to vault).

            store reads {"ServerURL","Username","Secret"} on standard input; get and erase \
            read a server URL; list writes {"URL":"username",...}. Server URLs match \
            strictly on scheme (https when none is given), host, port and path.
            """
    )

    static let notFound = "credentials not found in native keychain"
    static let missingServerURL = "no credentials server URL"
    static let missingUsername = "no credentials username"
    static let servicePrefix = "docker:"

    @OptionGroup var options: VaultOptions

    @Argument(help: "store, get, erase, list or version.")
    var action: String?

    /// A failure reported in upstream's words.
    struct Refusal: Error {
        let message: String
    }

    func run() throws {
        do {
            try perform()
        } catch {
            let message = (error as? Refusal)?.message ?? Failure.describe(error).message
            // Docker shows this line on the user's terminal: a path, URL or action in it
            // may hold terminal controls.
            let line = Escaping.terminalSafe(message.split(whereSeparator: \.isNewline).joined(separator: " "))
            Output.write(line + "\n", to: STDOUT_FILENO)
            exitProcess(ExitStatus.failure)
        }
    }

    private func perform() throws {
        switch action {
        case "store": try store()
        case "get": try get()
        case "erase": try erase()
        case "list": try list()
        case "version": Output.write("docker-credential-vault (VaultKit)\n", to: STDOUT_FILENO)
        case let other?: throw Refusal(message: "Unknown credential action `\(other)`")
        case nil: throw Refusal(message: "Usage: docker-credential-vault <store|get|erase|list|version>")
        }
    }

    private func store() throws {
        let input = try Self.readInput()
        let object: FlatJSONObject
        do {
            object = try input.withUnsafeBytes { bytes throws(FlatJSONObject.SyntaxError) in try FlatJSONObject(parsing: bytes) }
        } catch {
            // Refused, not stored as U+FFFD as Go's decoder would: then two different
            // secrets would be stored as the same bytes.
            if error.syntax?.reason == .unpairedSurrogate {
                throw Refusal(message: "invalid JSON on standard input: an unpaired surrogate escape (\\uD800 to \\uDFFF without its pair)")
            }
            throw Refusal(message: "invalid JSON on standard input: expected {\"ServerURL\",\"Username\",\"Secret\"}")
        }
        let serverURL = object.value("ServerURL")?.text ?? ""
        let username = object.value("Username")?.text ?? ""
        guard !serverURL.isEmpty else { throw Refusal(message: Self.missingServerURL) }
        guard !username.isEmpty else { throw Refusal(message: Self.missingUsername) }
        let service = try Self.service(for: serverURL)
        let secret = object.value("Secret") ?? SecretBytes()
        let vault = try options.openVault()
        defer { vault.close() }
        // One credential per registry: a new username replaces the old one.
        try vault.batch { batch in
            _ = try batch.deleteAll(service: service)
            try batch.set(secret, service: service, account: username, label: "Docker Credentials", generic: Data(serverURL.utf8))
        }
    }

    private func get() throws {
        let serverURL = try Self.readServerURL()
        let service = try Self.service(for: serverURL)
        let vault = try options.openVault()
        defer { vault.close() }
        guard let item = try vault.items(service: service).max(by: { $0.modified < $1.modified }) else {
            throw Refusal(message: Self.notFound)
        }
        let secret = try vault.secret(service: service, account: item.account)
        try Self.refuseUnsafe([("Username", ProtocolValue.isUnsafe(item.account))], service: service, account: item.account)
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("ServerURL"); writer.string(serverURL)
        writer.key("Username"); writer.string(item.account)
        writer.key("Secret")
        try secret.withUnsafeBytes { bytes in
            guard UTF8Validation.isValid(bytes) else { throw CLIError.notUTF8ForJSON }
            writer.utf8String(bytes)
        }
        writer.endObject()
        writer.buffer.append(UInt8(ascii: "\n"))
        try Output.writeStandardOutput(writer.buffer)
    }

    private func erase() throws {
        let service = try Self.service(for: Self.readServerURL())
        let vault = try options.openVault()
        defer { vault.close() }
        guard try vault.deleteAll(service: service) > 0 else { throw Refusal(message: Self.notFound) }
    }

    private func list() throws {
        let vault = try options.openVault()
        defer { vault.close() }
        let items = try vault.items().filter { $0.service.hasPrefix(Self.servicePrefix) }
        var writer = JSONWriter()
        writer.beginObject()
        var seen = Set<String>()
        for item in items.sorted(by: { $0.service < $1.service }) {
            let url = item.generic.flatMap { String(validating: $0, as: UTF8.self) } ?? String(item.service.dropFirst(Self.servicePrefix.count))
            guard seen.insert(url).inserted else { continue }
            try Self.refuseUnsafe([("ServerURL", ProtocolValue.isUnsafe(url)), ("Username", ProtocolValue.isUnsafe(item.account))], service: item.service, account: item.account)
            writer.key(url); writer.string(item.account)
        }
        writer.endObject()
        writer.buffer.append(UInt8(ascii: "\n"))
        try Output.writeStandardOutput(writer.buffer)
    }

    /// A username or server URL holding a newline or NUL is refused, with nothing written,
    /// as git's helper refuses one: no registry has such names, and tools that read the
    /// output line by line need not expect one. The secret is not: JSON carries it
    /// escaped, and upstream's helpers round-trip a newline in a secret (their tests do).
    private static func refuseUnsafe(_ values: [(field: String, unsafe: Bool)], service: String, account: String) throws(CLIError) {
        guard let field = values.first(where: \.unsafe)?.field else { return }
        throw .protocolCannotCarry(protocolName: "Docker's credential protocol", field: field, service: service, account: account)
    }

    private static func readInput() throws -> SecretBytes {
        var input = SecretBytes()
        guard try input.readAll(from: STDIN_FILENO, limit: SecretInput.maximumByteCount) else { throw CLIError.secretTooLarge }
        return input
    }

    /// The server URL on standard input, surrounding white space removed, as upstream does.
    private static func readServerURL() throws -> String {
        let text = try readInput().text.trimmingWhitespaceAndNewlines()
        guard !text.isEmpty else { throw Refusal(message: missingServerURL) }
        return text
    }

    private static func service(for serverURL: String) throws -> String {
        do {
            return servicePrefix + (try DockerServerURL(serverURL)).normalized
        } catch {
            throw Refusal(message: error.message)
        }
    }
}
