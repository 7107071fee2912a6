import VaultKit

extension VaultEngine {
    /// PostgreSQL: `postgres://user@host:port/database#name` (or `postgresql://`), the
    /// vault `name` in that database, `default` without a fragment. Register it with
    /// `VaultEngines.register(.postgres)`; libpq is loaded by the first URL it reads, so
    /// registering costs a program that opens only vault files nothing. A hot standby may
    /// be named in the URL's query (``PostgresStandbyURLOptions``):
    /// `?vaultkit_standby_host=replica`.
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
        let hash = url.firstIndex(of: "#")
        let (connection, standby) = try PostgresStandbyURLOptions.split(String(url[..<(hash ?? url.endIndex)]))
        let location = if let hash {
            try PostgresVaultLocation(connection, vaultName: String(url[url.index(after: hash)...]))
        } else {
            try PostgresVaultLocation(connection)
        }
        guard let standby else { return location }
        let standbyConnection = PostgresStandbyURLOptions.standbyConnection(
            primary: try PostgresVaultLocation.options(connection), host: standby.host, port: standby.port)
        return try location.readingFromStandby(standbyConnection, maxStaleness: standby.maxStaleness)
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
