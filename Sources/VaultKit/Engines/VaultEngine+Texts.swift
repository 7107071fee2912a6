extension VaultEngine {
    /// What a program tells its users about an engine's locations, in the engine's own
    /// words, so that the `vault` tool's help and refusals name no engine of their own.
    package struct Texts: Sendable {
        /// The engine's name in prose ("PostgreSQL").
        package let name: String
        /// A URL of the engine's form, as help texts show it.
        package let example: String
        /// Where the engine's client reads a password, since a URL may not hold one
        /// (`["~/.pgpass", "$PGPASSFILE", "$PGPASSWORD"]`), the usual first.
        package let passwordSources: [String]
        /// What ``isOtherForm(_:)`` recognises, after "holds" ("a libpq key=value connection string").
        package let otherFormName: String
        private let recognisesOtherForm: @Sendable (String) -> Bool

        package init(name: String, example: String, passwordSources: [String], otherFormName: String, isOtherForm: @escaping @Sendable (String) -> Bool) {
            self.name = name
            self.example = example
            self.passwordSources = passwordSources
            self.otherFormName = otherFormName
            recognisesOtherForm = isOtherForm
        }

        /// Whether `given` is a location in another form the engine's client takes but
        /// the engine does not, which would otherwise be read as a file path and repeated
        /// whole, secret and all, in "no vault at ...".
        package func isOtherForm(_ given: String) -> Bool {
            recognisesOtherForm(given)
        }
    }
}
