import VaultKit

/// Names the item and the version in the errors of `get --version` and `restore`, so the
/// message says which version of which item is missing.
enum HistoryNames {
    static func naming<Result>(service: String, account: String, version: UInt64, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch VaultError.versionNotFound {
            throw CLIError.versionNotFound(service: service, account: account, version: version)
        }
    }
}
