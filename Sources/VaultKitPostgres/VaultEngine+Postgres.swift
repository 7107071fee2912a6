import VaultKit

extension VaultEngine {
    /// PostgreSQL: `postgres://user@host:port/database#name` (or `postgresql://`), the
    /// vault `name` in that database, `default` without a fragment. Register it with
    /// `VaultEngines.register(.postgres)`; libpq is loaded by the first URL it reads, so
    /// registering costs a program that opens only vault files nothing.
    public static let postgres = VaultEngine(
        schemes: ["postgres", "postgresql"],
        texts: Texts(
            name: "PostgreSQL",
            example: "postgres://user@host:port/db#name",
            passwordSources: ["~/.pgpass", "$PGPASSFILE", "$PGPASSWORD"],
            otherFormName: "a libpq key=value connection string",
            isOtherForm: LibpqConnectionString.looksLikeOne
        )
    ) { (given: String) throws(VaultError) -> any VaultEngineLocation in
        // A scheme is case-insensitive (RFC 3986), libpq's prefix check is not.
        let separator = given.firstIndex(of: ":") ?? given.startIndex
        let url = given[..<separator].lowercased() + given[separator...]
        guard let hash = url.firstIndex(of: "#") else { return try PostgresVaultLocation(url) }
        return try PostgresVaultLocation(String(url[..<hash]), vaultName: String(url[url.index(after: hash)...]))
    }
}

extension PostgresVaultLocation: VaultEngineLocation {
    package var holdsSecret: Bool { holdsPassword }

    package func storage(busyTimeout: Duration) throws(VaultError) -> any VaultStorage {
        try PostgresVaultStorage.connecting(self, busyTimeout: busyTimeout)
    }
}

extension PostgresVaultStorage {
    /// A storage connected to `location`, its lock waits bounded by `busyTimeout`.
    static func connecting(_ location: PostgresVaultLocation, busyTimeout: Duration) throws(VaultError) -> PostgresVaultStorage {
        do {
            return try PostgresVaultStorage(location, lockTimeoutMilliseconds: busyTimeout.clampedMilliseconds)
        } catch {
            throw VaultError(error)
        }
    }
}
