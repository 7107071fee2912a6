/// Who a handle says it is: the writer name recorded in every record it writes, and so
/// in ``VaultItemVersion/writer`` and ``VaultChange/writer``.
/// Both calls take the vault's lock only; their async twins are in `Vault+Async.swift`.
extension Vault {
    /// The writer name this handle records: the host's name in the vault's host wraps
    /// when a host key unlocked it, else the name declared with ``declareWriter(_:)-2cegt``,
    /// by default `user@machine` (the effective user's login name and the host name).
    ///
    /// A name is what the writer says it is, not proof: any holder of the passphrase or
    /// key can write any name, and a host-key holder holds the master key and could seal
    /// another name too (docs/THREAT-MODEL.md, "Writer names").
    public func writer() throws(VaultError) -> String {
        try withUnlocked { (vault) throws(VaultError) in vault.writer }
    }

    /// Declares the writer name this handle records from now on (a service's name, a
    /// deployment's, `"ci@runner-7"`): 1 to 255 bytes of UTF-8 without control characters.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` with ``VaultError/Reason/invalidWriterName``,
    ///   or ``VaultError/Reason/writerFixedByHostKey`` on a handle a host key unlocked
    ///   (it records its host's name).
    public func declareWriter(_ name: String) throws(VaultError) {
        let name = try VaultWriter.validated(name)
        try withUnlocked { (vault) throws(VaultError) in
            guard !vault.writerIsHostName else { throw .invalidArgument(.writerFixedByHostKey) }
            vault.writer = name
        }
    }
}
