/// What help texts say about vault files that is their engine's (SQLite's) own, as
/// ``VaultEngine/Texts`` is for engines at URLs: the `vault` tool names no engine.
package enum VaultFileTexts {
    /// The suffix of the side file that holds commits not yet copied into the vault file.
    package static let commitLogSuffix = "-wal"
    /// How `Vault.backup(to:)` copies a vault while other processes use it.
    package static let onlineCopy = "SQLite's online backup"
}
