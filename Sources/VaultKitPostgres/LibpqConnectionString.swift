/// Recognises a libpq `key=value` connection string (`host=db password=x dbname=app`),
/// which the engine does not take (``VaultEngine/Texts/isOtherForm(_:)``).
///
/// Why: without this such a string is read as a file path, and "no vault at ..." then
/// prints it whole, password and all, on the terminal and into logs. The `vault` tool
/// refuses it instead, with a message that does not repeat it.
enum LibpqConnectionString {
    /// libpq's connection keywords (PostgreSQL 17, "Parameter Key Words").
    private static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
        "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
        "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode", "requiressl",
        "sslcompression", "sslcert", "sslkey", "sslpassword", "sslcertmode", "sslrootcert", "sslcrl",
        "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version",
        "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
        "load_balance_hosts", "sslnegotiation",
    ]

    /// Whether `text` holds a libpq keyword followed by `=` (spaces allowed around it) at
    /// its start or after white space, as every connection string does.
    static func looksLikeOne(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            // The start of a word.
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            var word = ""
            while index < scalars.count, scalars[index].isASCII, scalars[index].properties.isAlphabetic || scalars[index] == "_" {
                word.unicodeScalars.append(scalars[index])
                index += 1
            }
            var next = index
            while next < scalars.count, scalars[next].properties.isWhitespace { next += 1 }
            if !word.isEmpty, next < scalars.count, scalars[next] == "=", keywords.contains(word.lowercased()) { return true }
            // On to the next white space.
            while index < scalars.count, !scalars[index].properties.isWhitespace { index += 1 }
        }
        return false
    }
}
