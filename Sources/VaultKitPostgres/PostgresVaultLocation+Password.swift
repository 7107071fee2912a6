import VaultKit

extension PostgresVaultLocation {
    /// Whether the connection string (or the standby's) carries a password
    /// (`user:password@` or `?password=`), as libpq parsed it. Lets a caller refuse one
    /// that was given where others can read it, such as a command line, without ever
    /// seeing its value.
    public var holdsPassword: Bool { password != nil || standby?.password != nil }
}
