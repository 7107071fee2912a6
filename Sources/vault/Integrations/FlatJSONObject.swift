import VaultKit
import VaultTransfer

/// The string members of one JSON object, such as Docker's
/// `{"ServerURL":"...","Username":"...","Secret":"..."}`: a view over what the one JSON
/// reader (``JSONReader``, VaultTransfer's) decoded into ``SecretBytes``, so a secret in
/// the object never becomes a Swift `String`, and what the import refuses (a lone
/// surrogate escape) is refused here too. Members of other types are kept without a
/// value; nested objects and arrays are refused: the protocol has none.
struct FlatJSONObject {
    /// Each member's name and its decoded string value (`nil` for `null`, numbers, booleans).
    private(set) var members: [(name: String, value: SecretBytes?)] = []

    /// Why the bytes are not one flat JSON object: the reader's ``JSONSyntaxError``, or
    /// valid JSON of another shape (`syntax` is `nil` then).
    struct SyntaxError: Error {
        var syntax: JSONSyntaxError?
    }

    init(parsing bytes: UnsafeRawBufferPointer) throws(SyntaxError) {
        let root: JSONValue
        do {
            root = try JSONReader.parse(bytes)
        } catch {
            throw SyntaxError(syntax: error)
        }
        guard case .object(let members) = root else { throw SyntaxError() }
        for (name, value) in members {
            switch value {
            case .string(let text): self.members.append((name, text))
            case .null, .bool, .number: self.members.append((name, nil))
            case .array, .object: throw SyntaxError()
            }
        }
    }

    /// The value of the last member called `name`, compared without regard to case as
    /// Go's `encoding/json` (and so Docker) does.
    func value(_ name: String) -> SecretBytes? {
        members.last { $0.name.lowercased() == name.lowercased() }?.value
    }
}
