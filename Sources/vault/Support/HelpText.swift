import VaultKit

/// The parts of help texts and messages that name the registered storage engines, in
/// each engine's own words (``VaultEngine/Texts``): the tool names none itself.
enum HelpText {
    /// `["a", "b", "c"]` as "a, b or c".
    static func list(_ items: [String]) -> String {
        guard let last = items.last else { return "" }
        let rest = items.dropLast()
        return rest.isEmpty ? last : rest.joined(separator: ", ") + " or " + last
    }

    /// `--vault`'s help after "the URL of a vault in a database": " (EXAMPLE, ...)", or
    /// nothing when no engine is registered.
    static var urlExamples: String {
        let examples = VaultEngines.all.map(\.texts.example)
        return examples.isEmpty ? "" : " (" + examples.joined(separator: ", ") + ")"
    }

    /// The main help's lines "A vault in NAME: EXAMPLE (password from FILE).", one per engine.
    static var engineLocations: String {
        VaultEngines.all.map(\.texts).map { texts in
            "A vault in \(texts.name): \(texts.example)" + (texts.passwordSources.first.map { " (password from \($0))" } ?? "") + "."
        }.joined(separator: " ")
    }

    /// `vault unlock`'s help: where the agent finds each engine's database password.
    static var agentPasswords: String {
        VaultEngines.all.map(\.texts).filter { !$0.passwordSources.isEmpty }.map { texts in
            "A vault in \(texts.name) is opened by the agent with its own environment for the database password (\(texts.passwordSources.joined(separator: ", ")): those of the 'vault unlock' that started it)."
        }.joined(separator: " ")
    }
}
