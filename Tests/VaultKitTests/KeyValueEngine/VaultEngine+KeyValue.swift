@testable import VaultKit

extension VaultEngine {
    /// `memkv://NAME`: the database NAME of ``KeyValueServer/shared``. Its one line of
    /// registration, `VaultEngines.register(.memoryKeyValue)`, is all that reaches it.
    static let memoryKeyValue = VaultEngine(
        schemes: ["memkv"],
        texts: Texts(name: "the in-memory key-value server", example: "memkv://name", passwordSources: [], otherFormName: "no other form", isOtherForm: { _ in false })
    ) { (url: String) throws(VaultError) -> any VaultEngineLocation in
        let name = url.drop { $0 != ":" }.dropFirst(3)
        guard !name.isEmpty, !name.contains("/") else { throw .invalidArgument(.invalidVaultName) }
        return KeyValueLocation(name: String(name))
    }
}

/// A vault in the in-memory key-value server, by database name.
struct KeyValueLocation: VaultEngineLocation {
    let name: String

    var description: String { "memkv://" + name }
    var holdsSecret: Bool { false }

    func storage(busyTimeout: Duration) throws(VaultError) -> any VaultStorage {
        KeyValueStorage(location: description, database: KeyValueServer.shared.database(named: name), busyTimeout: busyTimeout)
    }
}
