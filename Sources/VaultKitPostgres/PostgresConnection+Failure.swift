internal import CLibPQ
import VaultKit

/// How ``PostgresConnection`` reports a failed call: a ``PostgresFailure`` with the
/// SQLSTATE, and libpq's or the server's text without the password, on one line.
extension PostgresConnection {
    /// Whether a failed connection failed in TLS: the server's certificate did not verify
    /// against `sslrootcert`, named another host (`verify-full`), or the server offered no
    /// TLS where the connection string requires it. libpq says so only in its message;
    /// its English texts (the tests' locale) name "SSL" or the certificate. A libpq
    /// translated into another language may not, and such a failure is then reported as
    /// an unreachable server (`ECONNREFUSED`).
    static func isTLSFailure(_ message: String) -> Bool {
        message.contains("SSL") || message.contains("certificate")
    }

    func connectionFailure() -> PostgresFailure {
        PostgresFailure(sqlState: nil, message: Self.scrubbed(String(cString: PQerrorMessage(handle)), password: password), connectionLost: true)
    }

    /// The failure a result reports; `nil` for success and for a statement the server
    /// skipped after an earlier failure in the pipeline.
    func failure(of result: OpaquePointer) -> PostgresFailure? {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_PIPELINE_ABORTED:
            return nil
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = Self.scrubbed(String(cString: PQresultErrorMessage(result)), password: password)
            return PostgresFailure(sqlState: sqlState, message: message, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
    }

    func check(_ result: OpaquePointer?) throws(PostgresFailure) {
        guard let result else { throw connectionFailure() }
        if let failure = failure(of: result) { throw failure }
    }

    /// `message` without the password, and on one line.
    static func scrubbed(_ message: String, password: String?) -> String {
        var text = message
        if let password, !password.isEmpty { text = text.replacingBytes(of: password, with: "***") }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingWhitespace()
    }
}
