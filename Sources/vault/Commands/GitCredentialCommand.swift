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

/// git's credential helper: `git-credential-vault` (which git runs for
/// `credential.helper vault`) execs `vault git-credential OPERATION`, so the helper opens
/// and unlocks the vault exactly as every other subcommand does.
///
/// An item is service `git:<protocol>://<host>[/<path>]`, account = username, secret = the
/// password (or, for git's `authtype` capability, the pre-encoded credential). An OAuth
/// refresh token is a second item, service `git-refresh-token:...`, same account.
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git's credential helper (run by git as git-credential-vault).",
        discussion: """
            Enable it with:  git config --global credential.helper vault

            git runs 'git-credential-vault get|store|erase' with the credential on standard \
            input (git help credential). Items are service git:PROTOCOL://HOST[/PATH] (the \
            path only with credential.useHttpPath), account = username. 'get' with no \
            username returns the most recently stored account; 'erase' without a username \
            removes every account, and without a path every path under that host. Expired \
            passwords (password_expiry_utc) are neither returned nor stored. Unknown \
            operations and attributes are ignored, as git requires. An item whose username, \
            password, credential, authtype or refresh token holds a newline or NUL (which \
            would inject attributes into git's line protocol) is refused: status 1, \
            nothing written.

            The vault is unlocked as for every command (VAULT_KEY_FILE, VAULT_PASSPHRASE_FILE, \
            VAULT_PASSPHRASE, else a prompt on the terminal). Without a terminal and \
            without those, the helper fails at once and git goes on to its next helper or \
            its own prompt.
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "get, store or erase (others are ignored).")
    var operation: String

    func run() throws {
        let operations = ["get", "store", "erase"]
        // Read the request first, whatever the operation: git waits for it to be consumed.
        let input = try Self.readRequest()
        guard operations.contains(operation) else { return }
        let request = GitCredentialRequest(parsing: input)
        guard let service = request.service, let refreshService = request.refreshTokenService else { return }
        let vault = try options.openVault()
        defer { vault.close() }
        switch operation {
        case "get": try get(request, service: service, refreshService: refreshService, vault: vault)
        case "store": try store(request, service: service, refreshService: refreshService, vault: vault)
        default: try erase(request, service: service, refreshService: refreshService, vault: vault)
        }
    }

    /// Standard input up to a blank line or its end, as the protocol ends a message (so
    /// someone typing a request by hand can finish it with an empty line).
    private static func readRequest() throws(CLIError) -> SecretBytes {
        var input = SecretBytes()
        while input.count <= 1024 * 1024 {
            let (n, failure) = input.appendRead(from: STDIN_FILENO, maxCount: 4096)
            if failure != 0 { throw .cannotRead(what: "standard input", errno: failure) }
            if n == 0 { return input }
            let endsMessage = input.withUnsafeBytes { bytes in
                bytes.first == UInt8(ascii: "\n") || (1..<bytes.count).contains { bytes[$0] == UInt8(ascii: "\n") && bytes[$0 - 1] == UInt8(ascii: "\n") }
            }
            if endsMessage { return input }
        }
        throw .secretTooLarge
    }

    private func get(_ request: GitCredentialRequest, service: String, refreshService: String, vault: Vault) throws {
        let candidates = try vault.items(service: service)
            .filter { request.username == nil || $0.account == request.username }
            .filter { item in
                let stored = GitStoredAttributes(generic: item.generic)
                return !stored.isExpired() && (stored.authtype == nil || request.acceptsAuthtype)
            }
            .sorted { $0.modified != $1.modified ? $0.modified > $1.modified : $0.account < $1.account }
        guard let item = candidates.first else { return }
        let stored = GitStoredAttributes(generic: item.generic)
        let secret = try vault.secret(service: service, account: item.account)
        let refreshToken = stored.authtype == nil ? try? vault.secret(service: refreshService, account: item.account) : nil
        // git's protocol is line-based: a newline (or NUL) in any value would end it early
        // and inject attributes of the item's choosing (another username and password).
        // Such an item (written with `vault set`) is refused before anything is written.
        let values: [(field: String, unsafe: Bool)] = [
            ("username", ProtocolValue.isUnsafe(item.account)),
            ("authtype", stored.authtype.map(ProtocolValue.isUnsafe) ?? false),
            (stored.authtype == nil ? "password" : "credential", ProtocolValue.isUnsafe(secret)),
            ("oauth_refresh_token", refreshToken.map(ProtocolValue.isUnsafe) ?? false),
        ]
        if let field = values.first(where: \.unsafe)?.field {
            throw CLIError.protocolCannotCarry(protocolName: "git's credential protocol", field: field, service: service, account: item.account)
        }
        var output = SecretBytes()
        if request.acceptsAuthtype { output.append("capability[]=authtype\n") }
        // A pre-encoded credential may belong to no user: then git gets no username.
        if stored.authtype == nil || !item.account.isEmpty { output.append("username=" + item.account + "\n") }
        if let authtype = stored.authtype {
            output.append("authtype=" + authtype + "\ncredential=")
        } else {
            output.append("password=")
        }
        output.append(contentsOf: secret)
        output.append(UInt8(ascii: "\n"))
        if let expiry = stored.passwordExpiry { output.append("password_expiry_utc=\(expiry)\n") }
        if let refreshToken {
            output.append("oauth_refresh_token=")
            output.append(contentsOf: refreshToken)
            output.append(UInt8(ascii: "\n"))
        }
        try Output.writeStandardOutput(output)
    }

    private func store(_ request: GitCredentialRequest, service: String, refreshService: String, vault: Vault) throws {
        let secret: SecretBytes
        var stored = GitStoredAttributes(passwordExpiry: request.passwordExpiry)
        if let credential = request.credential, let authtype = request.authtype, request.acceptsAuthtype {
            secret = credential
            stored.authtype = authtype
        } else if let password = request.password, request.username != nil {
            secret = password
        } else {
            return  // Nothing git could use later.
        }
        if stored.isExpired() { return }
        let account = request.username ?? ""
        try vault.batch { batch in
            try batch.set(secret, service: service, account: account, generic: stored.generic)
            if let refreshToken = request.oauthRefreshToken, stored.authtype == nil {
                try batch.set(refreshToken, service: refreshService, account: account)
            } else {
                _ = try batch.delete(service: refreshService, account: account)
            }
        }
    }

    private func erase(_ request: GitCredentialRequest, service: String, refreshService: String, vault: Vault) throws {
        let prefixes = request.servicePathPrefixes
        let matching = try vault.items().filter { item in
            (item.service == service || item.service == refreshService || prefixes.contains { item.service.hasPrefix($0) })
                && (request.username == nil || item.account == request.username)
        }
        // Newer git sends the password it is rejecting: then only an item holding that
        // password is erased (with its refresh token), not one another process stored since.
        let erased = try matching.filter { item in
            guard item.service.hasPrefix("git:") else { return false }
            guard let password = request.password else { return true }
            return try vault.secret(service: item.service, account: item.account) == password
        }
        let erasedKeys = Set(erased.map { ItemKey(service: String($0.service.dropFirst("git:".count)), account: $0.account) })
        let refreshTokens = matching.filter { item in
            guard item.service.hasPrefix("git-refresh-token:") else { return false }
            return request.password == nil
                || erasedKeys.contains(ItemKey(service: String(item.service.dropFirst("git-refresh-token:".count)), account: item.account))
        }
        let doomed = erased + refreshTokens
        guard !doomed.isEmpty else { return }
        try vault.batch { batch in
            for item in doomed { _ = try batch.delete(service: item.service, account: item.account) }
        }
    }

    private struct ItemKey: Hashable {
        var service: String
        var account: String
    }
}
