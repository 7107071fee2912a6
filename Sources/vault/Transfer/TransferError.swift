/// Why an import or export file was refused. Messages name the place in the file
/// (an item number, a line) and never hold a secret.
struct TransferError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
