/// UTF-8 checked on bytes that may be a secret, without copying them out of protected memory.
package enum UTF8Validation {
    /// Whether `bytes` are valid UTF-8, checked in place: unlike `String(validating:)`,
    /// this makes no unprotected copy of a secret.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
