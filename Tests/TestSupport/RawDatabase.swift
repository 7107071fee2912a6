import CSQLite
import Foundation

/// Direct SQL on a vault file, playing the attacker who edits rows behind VaultKit's back.
public final class RawDatabase {
    private var handle: OpaquePointer?

    public init(_ path: String) {
        sqlite3_open(path, &handle)
    }

    deinit {
        sqlite3_close(handle)
    }

    public func execute(_ sql: String) {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            fatalError("SQL failed: \(message)")
        }
    }

    /// The first column of the first row, as an integer.
    public func integer(_ sql: String) -> Int64? {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : nil
    }

    /// Rows of blobs, hex-encoded, for a query.
    public func rows(_ sql: String) -> [[String]] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                let count = Int(sqlite3_column_bytes(statement, column))
                guard let base = sqlite3_column_blob(statement, column) else { return "" }
                return UnsafeRawBufferPointer(start: base, count: count).map { String(format: "%02x", $0) }.joined()
            })
        }
        return rows
    }
}
