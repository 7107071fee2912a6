extension JSONReader {
    /// ``parse(_:)`` for an import file: a syntax error is the file's refusal.
    static func parseImport(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> JSONValue {
        do {
            return try parse(bytes)
        } catch {
            throw TransferError(error)
        }
    }
}
