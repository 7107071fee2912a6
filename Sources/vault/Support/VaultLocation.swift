import VaultKit
import VaultKitPostgres

/// Where the vault a command works on lives: a file, or a named vault in a PostgreSQL
/// database (`postgres://user@host:port/db#name`, docs/CLI.md, "PostgreSQL vaults").
enum VaultLocation {
    case file(String)
    /// `url`: the URL as given (the agent opens the vault from it, TLS options and all).
    case postgres(PostgresVaultLocation, url: String)

    /// `given` read as a `postgres://` or `postgresql://` URL, else as a file path; a libpq
    /// `key=value` connection string is refused (``ConnectionString``).
    ///
    /// A URL's `#fragment` names the vault in that database (`default` without one). A
    /// password in the URL is refused, from the command line or the environment: argv is
    /// readable by every user of the machine, and children inherit the environment.
    /// libpq reads the password from `PGPASSFILE`, `~/.pgpass` or `PGPASSWORD` itself.
    static func parse(_ given: String, from source: String) throws(CLIError) -> VaultLocation {
        guard Self.isPostgresURL(given) else {
            if ConnectionString.looksLikeOne(given) {
                // Never repeated: it may hold a password.
                throw .usage("\(source) holds a libpq key=value connection string, which vault does not take; give a postgres://user@host:port/db#name URL, with the password in ~/.pgpass, $PGPASSFILE or $PGPASSWORD")
            }
            return .file(given)
        }
        let (connection, fragment) = Self.splitFragment(given)
        let location: PostgresVaultLocation
        do {
            location = try PostgresVaultLocation(connection, vaultName: fragment ?? "default")
        } catch {
            // The error never repeats the URL, which may hold a password.
            if error.reason == .invalidVaultName {
                throw .usage("\(source): the vault name after '#' must be 1 to 63 of A-Z a-z 0-9 . _ -")
            }
            throw .usage("\(source): not a PostgreSQL URL libpq can read")
        }
        if location.holdsPassword {
            throw .usage("\(source): the PostgreSQL URL must not hold a password; put it in ~/.pgpass, $PGPASSFILE or $PGPASSWORD, where libpq reads it")
        }
        return .postgres(location, url: given)
    }

    /// The file path, or `nil` for a vault in PostgreSQL.
    var filePath: String? {
        if case .file(let path) = self { path } else { nil }
    }

    /// What prompts and messages name: the path, or the URL without any password.
    var displayName: String {
        switch self {
        case .file(let path): path
        case .postgres(let location, _): location.description
        }
    }

    /// How the agent knows this vault (docs/AGENT.md): a file by its device and inode,
    /// `nil` when there is no such file; a vault in PostgreSQL by its URL.
    var agentTarget: VaultTarget? {
        switch self {
        case .file(let path):
            FileIdentity.of(path).map { VaultTarget(device: $0.device, inode: $0.inode, path: path) }
        case .postgres(let location, _):
            .databaseVault(location.description)
        }
    }

    /// The file path, or a usage error saying `command` needs a vault file.
    func requireFile(for command: String, because reason: String) throws(CLIError) -> String {
        guard let path = filePath else { throw .usage("vault \(command) needs a vault file, not a PostgreSQL vault: \(reason)") }
        return path
    }

    private static func isPostgresURL(_ given: String) -> Bool {
        given.hasPrefix("postgres://") || given.hasPrefix("postgresql://")
    }

    private static func splitFragment(_ url: String) -> (String, String?) {
        guard let hash = url.firstIndex(of: "#") else { return (url, nil) }
        return (String(url[..<hash]), String(url[url.index(after: hash)...]))
    }
}
