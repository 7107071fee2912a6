extension Vault {
    /// Where a vault lives: a file, or a vault of a storage engine reached by URL
    /// (``VaultEngines``). It never holds a secret (an engine's URL is kept without its
    /// password), so it can be printed, logged and shown in a prompt.
    ///
    /// ```swift
    /// switch vault.location {
    /// case .file(let path): print("file", path)
    /// case .engine(let url): print("database", url)   // postgres://app@db:5432/secrets#default
    /// }
    /// ```
    public enum Location: Sendable, Hashable, CustomStringConvertible {
        /// A vault file, at the path it was created or opened with.
        case file(path: String)
        /// A vault in a storage engine, named by its URL without any password.
        case engine(url: String)

        /// The path or the URL: what errors about the vault name (``VaultError/path``).
        public var description: String {
            switch self {
            case .file(let path): path
            case .engine(let url): url
            }
        }
    }

    /// The vault file's path, or for a vault in a storage engine its URL without the password.
    @available(*, deprecated, message: "use location: .file(path:) for a vault file, .engine(url:) for a vault in a storage engine (location.description is this string)")
    public var path: String { location.description }
}
