import ArgumentParser

/// How `vault get` and `vault read` write an item: the secret alone (default), the whole
/// item as JSON, or only its generic data.
struct SecretFormatOptions: ParsableArguments {
    @Flag(help: "Write the item, with its secret, as one JSON object.")
    var json = false

    @Flag(help: "Write only the item's generic data.")
    var generic = false

    func validate() throws {
        if json && generic { throw ValidationError("--json and --generic cannot be used together") }
    }
}
