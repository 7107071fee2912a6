/// A literal `replacingOccurrences(of:with:)`, which FoundationEssentials lacks (`vault`
/// imports only FoundationEssentials so that it does not link ICU).
extension String {
    /// Every occurrence of `target`'s UTF-8 bytes replaced by `replacement`, left to right,
    /// without overlaps. Bytes, not characters: a secret being scrubbed from a message is
    /// found even where the next character would combine with its last one. UTF-8 is
    /// self-synchronising, so a match always starts and ends on scalar boundaries.
    package func replacingBytes(of target: String, with replacement: String) -> String {
        let needle = Array(target.utf8)
        guard !needle.isEmpty else { return self }
        let haystack = Array(utf8)
        var result: [UInt8] = []
        result.reserveCapacity(haystack.count)
        var index = 0
        while index < haystack.count {
            if haystack.count - index >= needle.count && haystack[index..<index + needle.count].elementsEqual(needle) {
                result.append(contentsOf: replacement.utf8)
                index += needle.count
            } else {
                result.append(haystack[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
