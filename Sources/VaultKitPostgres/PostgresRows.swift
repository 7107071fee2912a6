internal import CLibPQ

/// The rows of one result, valid inside the closure that receives them.
struct PostgresRows {
    let result: OpaquePointer

    var count: Int { Int(PQntuples(result)) }

    /// How many rows an INSERT, UPDATE or DELETE changed.
    var changed: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// A `bytea` or `text` column's bytes, without copying.
    func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), Int32(column)), count: length)
    }

    func array(_ row: Int, _ column: Int) -> [UInt8] { Array(bytes(row, column)) }

    func text(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// A `bigint` column (binary: eight bytes, big-endian).
    func int64(_ row: Int, _ column: Int) -> Int64 {
        let raw = bytes(row, column)
        guard raw.count == 8 else { return Int64.min }
        return raw.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}
