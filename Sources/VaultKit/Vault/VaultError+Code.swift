extension VaultError {
    /// What kind of failure a ``VaultError`` is: a growable set of static members, so a
    /// new code is not a breaking change (switch over it with a `default`).
    ///
    /// Each code has a stable number (``rawValue``) for transports such as the `vault`
    /// agent's protocol; a number is never reused for another meaning.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable number.
        public let rawValue: UInt8

        private init(_ rawValue: UInt8) { self.rawValue = rawValue }

        /// The code with this number, or `nil` when this version does not know it.
        public init?(rawValue: UInt8) {
            guard Self.names.indices.contains(Int(rawValue)) else { return nil }
            self.rawValue = rawValue
        }

        public static let wrongPassphrase = Code(0)
        public static let itemNotFound = Code(1)
        public static let duplicateItem = Code(2)
        public static let vaultNotFound = Code(3)
        public static let vaultAlreadyExists = Code(4)
        public static let notAVault = Code(5)
        public static let unsupportedFormatVersion = Code(6)
        public static let formatUpgradeRequired = Code(7)
        public static let corrupted = Code(8)
        public static let tampered = Code(9)
        public static let io = Code(10)
        public static let invalidArgument = Code(11)
        public static let busy = Code(12)
        public static let insecurePermissions = Code(13)
        public static let untrustedOwner = Code(14)
        public static let symbolicLink = Code(15)
        public static let keyChanged = Code(16)
        public static let closed = Code(17)
        public static let secretNotUTF8 = Code(18)
        public static let cryptoUnavailable = Code(19)
        public static let keyDerivationFailed = Code(20)
        public static let rolledBack = Code(21)
        public static let batchEnded = Code(22)
        public static let reentrantCall = Code(23)
        public static let valueNotEncodable = Code(24)
        public static let valueNotDecodable = Code(25)
        public static let unsupportedValueEncoding = Code(26)
        public static let rollbackRecordInvalid = Code(27)
        public static let cancelled = Code(28)
        public static let versionNotFound = Code(29)

        /// The names, indexed by number.
        private static let names = [
            "wrongPassphrase", "itemNotFound", "duplicateItem", "vaultNotFound", "vaultAlreadyExists", "notAVault",
            "unsupportedFormatVersion", "formatUpgradeRequired", "corrupted", "tampered", "io", "invalidArgument",
            "busy", "insecurePermissions", "untrustedOwner", "symbolicLink", "keyChanged", "closed", "secretNotUTF8",
            "cryptoUnavailable", "keyDerivationFailed", "rolledBack", "batchEnded", "reentrantCall",
            "valueNotEncodable", "valueNotDecodable", "unsupportedValueEncoding", "rollbackRecordInvalid", "cancelled",
            "versionNotFound",
        ]

        /// The code's name, as in `VaultError.Code.itemNotFound`.
        public var description: String { Self.names[Int(rawValue)] }
    }
}
