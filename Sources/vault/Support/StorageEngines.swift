import VaultKit
import VaultKitPostgres

/// The storage engines `vault` reaches by URL, besides vault files: adding an engine to
/// the tool is its line here (and its module among the target's dependencies); no command
/// names an engine.
enum StorageEngines {
    /// Registers each engine; costs nothing at start (an engine loads its client library
    /// when it first reads a URL: `vault get` on a file never loads libpq).
    static func register() {
        VaultEngines.register(.postgres)
    }
}
