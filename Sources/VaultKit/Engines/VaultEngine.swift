/// A storage engine that keeps vaults at URLs of its own schemes (`postgres://...`), as
/// ``VaultEngines`` finds it: the library, the `vault` tool, its agent and the test helpers
/// turn a location string into storage through this one value, so none of them names an
/// engine (docs/ARCHITECTURE.md, "Adding a storage engine").
///
/// An engine module declares one (`VaultEngine.postgres`), and a program that wants it
/// registers it once, before it opens a vault by URL: ``VaultEngines/register(_:)``.
public struct VaultEngine: Sendable {
    /// The URL schemes this engine opens, in lower case and without `://`.
    public let schemes: [String]
    /// Reads a URL of one of ``schemes`` as a location of this engine.
    let locate: @Sendable (_ url: String) throws(VaultError) -> any VaultEngineLocation
    /// What programs tell users about this engine's locations.
    package let texts: Texts

    /// - Parameter locate: reads a URL of one of `schemes` as a location; throws
    ///   ``VaultError/invalidArgument(_:)`` without repeating the URL, which may hold a password.
    package init(schemes: [String], texts: Texts, locate: @escaping @Sendable (_ url: String) throws(VaultError) -> any VaultEngineLocation) {
        self.schemes = schemes.map { $0.lowercased() }
        self.texts = texts
        self.locate = locate
    }
}
