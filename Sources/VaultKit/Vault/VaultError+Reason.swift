extension VaultError {
    /// Why a vault is ``Code/corrupted`` or ``Code/tampered``, or why an argument was
    /// refused (``Code/invalidArgument``): a growable set of static members, compared
    /// by identity rather than by text.
    ///
    /// Each reason has a stable number (``rawValue``) for transports and a fixed English
    /// text (``description``) that never holds a value from the vault or the caller.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        /// The reason's stable number.
        public let rawValue: UInt16

        private init(_ rawValue: UInt16) { self.rawValue = rawValue }

        /// The reason with this number, or `nil` when this version does not know it.
        public init?(rawValue: UInt16) {
            guard Self.texts.indices.contains(Int(rawValue)) else { return nil }
            self.rawValue = rawValue
        }

        // Corrupted: the storage structure cannot be read.
        public static let missingHeader = Reason(0)
        public static let invalidFormatVersion = Reason(1)
        public static let kdfParametersOutOfBounds = Reason(2)
        public static let unknownKDFAlgorithm = Reason(3)
        public static let emptyPragmaResult = Reason(4)
        public static let unexpectedStorageError = Reason(5)
        /// The storage engine reports its file damaged (SQLite's `SQLITE_CORRUPT`).
        public static let storageDamaged = Reason(6)
        public static let invalidHeaderFieldLength = Reason(7)
        public static let rowVanishedDuringRekey = Reason(8)
        public static let rekeyedRowIDInUse = Reason(9)
        public static let invalidItemRowFieldLength = Reason(10)

        // Tampered: authentication or a consistency check failed.
        public static let unknownItemRecordVersion = Reason(11)
        public static let malformedItemRecord = Reason(12)
        public static let manifestRootFailedAuthentication = Reason(13)
        public static let invalidManifestBucket = Reason(14)
        public static let manifestBucketsMismatch = Reason(15)
        public static let rowsChanged = Reason(16)
        public static let formatDowngraded = Reason(17)
        public static let keyCheckMismatch = Reason(18)
        public static let vaultIDChanged = Reason(19)
        public static let itemFailedAuthentication = Reason(20)
        public static let recordNotOfRow = Reason(21)
        public static let recordNotOfService = Reason(22)
        public static let formatVersionChangedWhileOpen = Reason(23)
        public static let manifestRootMissing = Reason(24)
        public static let invalidManifestRoot = Reason(25)
        public static let headerFailedAuthentication = Reason(26)
        public static let rowStoredTwice = Reason(27)
        public static let schemaChanged = Reason(28)
        public static let generationMissing = Reason(29)
        public static let generationInvalid = Reason(30)

        // Invalid argument: refused before anything was touched.
        public static let batchRolledBack = Reason(31)
        public static let backupNeedsVaultFile = Reason(32)
        public static let negativeSchemaVersion = Reason(33)
        public static let keyGivenForPassphraseVault = Reason(34)
        public static let passphraseGivenForKeyVault = Reason(35)
        public static let dataTooLarge = Reason(36)
        public static let emptyService = Reason(37)
        public static let serviceTooLong = Reason(38)
        public static let accountTooLong = Reason(39)
        /// A key of the wrong length; ``VaultError/byteCount`` holds the length given.
        public static let keyLength = Reason(40)
        public static let keyNotHex = Reason(41)
        public static let keyNotBase64 = Reason(42)
        public static let kdfOpsLimitOutOfRange = Reason(43)
        public static let kdfMemoryLimitOutOfRange = Reason(44)

        // Corrupted, added after the list above: numbers only ever grow.
        /// The storage engine refuses a statement on the file's structure (a missing
        /// table, a wrong column type, a broken constraint).
        public static let storageStructureRefused = Reason(45)

        // Host key wraps and PostgreSQL vaults (numbers only ever grow).
        /// A stored host wrap's public key is not a key (corrupted).
        public static let invalidHostPublicKey = Reason(46)
        public static let hostNameLength = Reason(47)
        public static let hostNameControlCharacters = Reason(48)
        /// A vault opened with a host key cannot re-key or remove hosts.
        public static let rekeyNeedsPassphraseOrKey = Reason(49)
        public static let noSuchHost = Reason(50)
        /// A host's wrap opens a master key the vault does not use (tampered).
        public static let hostWrapHoldsAnotherMasterKey = Reason(51)
        public static let hostNameTaken = Reason(52)
        public static let hostKeyAlreadyAdded = Reason(53)
        /// A host public key of the wrong length; ``VaultError/byteCount`` holds the length given.
        public static let hostPublicKeyLength = Reason(54)
        public static let hostPublicKeyNotBase64 = Reason(55)
        public static let hostPrivateKeyLength = Reason(56)
        public static let hostKeyFileNotRegular = Reason(57)
        public static let hostPrivateKeyFileLength = Reason(58)
        public static let invalidVaultName = Reason(59)
        public static let notAConnectionString = Reason(60)

        // The vault identity that signs the host wraps (docs/FORMAT.md section 12.1).
        public static let invalidVaultIdentityFingerprint = Reason(61)
        /// The vault has host wraps but no identity signs them (tampered, or a vault from
        /// before identities: a passphrase or key holder calls ``Vault/identity()-14rjn``).
        public static let vaultIdentityMissing = Reason(62)
        /// The vault's identity is not one the host pinned (tampered: not the host's vault).
        public static let vaultIdentityNotPinned = Reason(63)
        /// The host wraps are not the ones the vault's identity signed (tampered).
        public static let hostWrapsSignatureInvalid = Reason(64)
        /// The stored identity row has the wrong lengths or version (corrupted).
        public static let invalidVaultIdentity = Reason(65)
        /// The identity's secret key does not open with the passphrase or key (tampered).
        public static let vaultIdentityDoesNotOpen = Reason(66)
        /// A vault opened with a host key cannot add hosts or create the identity.
        public static let hostChangeNeedsPassphraseOrKey = Reason(67)
        /// An X25519 public key of small order (all zeros, for one): anyone opens what is sealed to it.
        public static let hostPublicKeyLowOrder = Reason(68)
        /// A URL whose scheme no registered storage engine opens (``VaultEngines``).
        public static let noEngineForURL = Reason(69)

        // Item history (docs/FORMAT.md section 14).
        /// A writer name must be 1 to 255 bytes of UTF-8 without control characters.
        public static let invalidWriterName = Reason(70)
        /// A vault opened with a host key records its host's name as the writer.
        public static let writerFixedByHostKey = Reason(71)
        /// A history retention must be 0 to ``Vault/maximumHistoryRetention`` versions.
        public static let historyRetentionOutOfRange = Reason(72)
        /// A kept version's row is already taken by another (tampered).
        public static let versionNumberInUse = Reason(73)

        // PostgreSQL standbys.
        /// A standby's maximum staleness must be more than zero.
        public static let standbyStalenessNotPositive = Reason(74)

        /// The texts, indexed by number: the messages users saw before reasons were codes.
        private static let texts = [
            "missing header", "invalid format version", "KDF parameters out of bounds", "unknown KDF algorithm",
            "empty pragma result", "unexpected storage error", "database disk image is malformed",
            "invalid header field length", "an item row vanished during the re-key", "re-keyed row id already in use",
            "invalid item row field length",
            "unknown item record version", "malformed item record", "manifest root failed authentication",
            "invalid manifest bucket", "manifest buckets do not match the manifest root",
            "an item was deleted, added or replaced with an older version",
            "the vault's format version was changed to an older one", "master key check does not match",
            "the vault's id changed while it was open", "item failed authentication",
            "item record does not belong to its row", "item record does not belong to its service",
            "the vault's format version changed while it was open", "manifest root is missing", "invalid manifest root",
            "vault header or manifest root failed authentication", "an item row is stored twice",
            "the vault's database schema was changed", "the vault's generation is missing", "invalid vault generation",
            "batch rolled back", "only a vault file can be backed up", "a value's schema version must not be negative",
            "this vault is unlocked with a key, not a passphrase", "this vault is unlocked with a passphrase, not a key",
            "secret and generic data must each be at most 64 MiB", "service must not be empty",
            "service is longer than 64 KiB", "account is longer than 64 KiB",
            "a vault key must be exactly \(VaultKey.byteCount) bytes", "a vault key must be 64 hexadecimal digits",
            "a vault key must be 44 characters of base64",
            "KDF opsLimit must be in \(KDFParameters.minimumOpsLimit)...\(KDFParameters.maximumOpsLimit)",
            "KDF memoryLimit must be in \(KDFParameters.minimumMemoryLimit)...\(KDFParameters.maximumMemoryLimit) bytes",
            "the database does not have the vault's structure",
            "invalid host public key", "a host name must be 1 to 255 bytes long",
            "a host name must not contain control characters",
            "re-keying needs the vault opened with its passphrase or key: a host key cannot rewrap them",
            "no host of this name", "a host key wrap holds another master key", "a host of this name already exists",
            "this public key is already a host of the vault", "a host public key must be exactly 32 bytes",
            "a host public key must be 44 characters of base64", "a host private key must be exactly 32 bytes",
            "a host private key file must be a regular file", "a host private key file must hold exactly 32 bytes",
            "a vault name is 1 to 63 characters of A-Z, a-z, 0-9, '.', '_' and '-'",
            "not a PostgreSQL connection string or URL",
            "a vault identity is \"vkid1:\" and 64 lowercase hexadecimal digits",
            "the host key wraps are signed by no vault identity: a passphrase or key holder creates one ('vault host identity')",
            "the vault's identity is not the one pinned for this host key",
            "the host key wraps are not the ones the vault's identity signed",
            "invalid vault identity record",
            "the vault identity's secret key does not open with this passphrase or key",
            "adding a host or creating the vault identity needs the vault opened with its passphrase or key: a host key cannot sign the host wraps",
            "a host public key must not be a low-order point such as all zeros",
            "no storage engine is registered for this URL's scheme",
            "a writer name must be 1 to 255 bytes of UTF-8 without control characters",
            "a vault opened with a host key records its host's name as the writer",
            "history retention must be 0 to 1000 versions",
            "an item version's row is already taken",
            "a standby's maximum staleness must be more than zero",
        ]

        /// The reason in words, as the CLI prints it.
        public var description: String { Self.texts[Int(rawValue)] }
    }
}
