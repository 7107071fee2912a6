/// Why an import or export file was refused. Messages name the place in the file
/// (an item number, a line) and never hold a secret.
public struct TransferError: Error, CustomStringConvertible {
    public let description: String
    /// The JSON reader's typed reason, when the file is not valid JSON.
    package let syntaxError: JSONSyntaxError?

    package init(_ description: String) {
        self.description = description
        syntaxError = nil
    }

    /// A file that is not valid JSON, in the reader's words ("invalid JSON at line 3: ...").
    package init(_ syntaxError: JSONSyntaxError) {
        description = syntaxError.description
        self.syntaxError = syntaxError
    }
}
