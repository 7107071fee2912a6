/// A failed libpq call: the SQLSTATE (`nil` when the connection itself failed) and the
/// server's message with any password removed.
struct PostgresFailure: Error {
    let sqlState: String?
    let message: String
    let connectionLost: Bool
    /// The session was never established (the server unreachable or refusing it).
    var neverConnected = false
    /// The server refused the password it was sent.
    var credentialsRefused = false
    /// TLS failed: the server could not be verified (see ``PostgresConnection/isTLSFailure(_:)``).
    var tlsFailed = false
}
