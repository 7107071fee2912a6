internal import CLibPQ
import VaultKit

/// Where a PostgreSQL vault lives: a libpq connection string (a `postgres://` URL or
/// `key=value` pairs) and the vault's name in that database.
///
/// The connection string may hold a password, so it is never shown: ``description``
/// (what errors and `Vault.location` name) is rebuilt from the user, host, port and
/// database alone, and reflection (`dump`) sees only that. Prefer leaving the password
/// out: libpq reads it from `PGPASSFILE`, `~/.pgpass` or `PGPASSWORD` by itself.
/// TLS with certificate verification: `sslmode=verify-full sslrootcert=/path/ca.pem`.
public struct PostgresVaultLocation: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The connection string as given (never printed).
    let conninfo: String
    /// The password in the connection string, if any, to remove from server messages.
    let password: String?
    /// The vault's name: 1 to 63 characters of `A-Z a-z 0-9 . _ -`.
    public let vaultName: String
    /// `postgres://user@host:port/database#vault`, without the password.
    public let description: String
    /// The hot standby that may answer reads (``readingFromStandby(_:maxStaleness:statistics:)``).
    public internal(set) var standby: Standby?

    /// - Throws: `VaultError.invalidArgument(_:)` for a connection string libpq cannot
    ///   parse (without repeating it) or a malformed vault name.
    public init(_ connection: String, vaultName: String = "default") throws(VaultError) {
        guard (1...63).contains(vaultName.utf8.count),
              vaultName.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { throw .invalidArgument(.invalidVaultName) }
        let values = try Self.options(connection)
        conninfo = connection
        password = values["password"]
        self.vaultName = vaultName
        description = Self.server(values) + "#" + vaultName
    }

    /// The options libpq parses out of `connection`.
    /// - Throws: `VaultError.invalidArgument(.notAConnectionString)`, without repeating it.
    static func options(_ connection: String) throws(VaultError) -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connection, &errorMessage) else {
            // libpq's message may quote the string, password and all: not repeated.
            if let errorMessage { PQfreemem(errorMessage) }
            throw .invalidArgument(.notAConnectionString)
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return values
    }

    /// `postgres://user@host:port/database`, from parsed options: never the password.
    static func server(_ values: [String: String]) -> String {
        let user = values["user"].map { $0 + "@" } ?? ""
        let host = values["host"] ?? values["hostaddr"] ?? ""
        let port = values["port"].map { ":" + $0 } ?? ""
        return "postgres://\(user)\(host)\(port)/\(values["dbname"] ?? "")"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["description": description], displayStyle: .struct)
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
