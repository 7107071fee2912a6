import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// `VaultError`: every error reads as users and scripts expect it to, holds no secret,
/// and its code and reason numbers stay what the agent's wire protocol sends.
@Suite(.offCooperativePool) struct VaultErrorTests {
    /// Every code once, with its text: users and scripts match these words, so a change
    /// to one must be deliberate.
    static let described: [(VaultError, String)] = [
        (.wrongPassphrase, "wrong passphrase or key"),
        (.itemNotFound, "item not found"),
        (.duplicateItem, "item already exists"),
        (.vaultNotFound(path: "/v/a"), "no vault at /v/a"),
        (.vaultAlreadyExists(path: "/v/b"), "a file already exists at /v/b"),
        (.notAVault(path: "/v/c"), "not a vault: /v/c"),
        (.unsupportedFormatVersion(9), "unsupported vault format version 9"),
        (.formatUpgradeRequired(version: 1),
         "vault format 1 cannot be verified; upgrade it explicitly (vault upgrade) if you trust the file as it is"),
        (.corrupted(reason: .kdfParametersOutOfBounds), "vault is corrupted: KDF parameters out of bounds"),
        (.tampered(reason: .rowsChanged), "vault is tampered: an item was deleted, added or replaced with an older version"),
        (.io(path: "/v/d", errno: ENOENT), "/v/d: No such file or directory"),
        (.invalidArgument(.emptyService), "invalid argument: service must not be empty"),
        (.busy(path: "/v/e"), "vault is locked by another process for too long: /v/e"),
        (.insecurePermissions(path: "/v/f", mode: 0o100666), "refusing /v/f: permissions 666 let group or others write it (chmod 600)"),
        (.insecurePermissions(path: "/v/f-wal", mode: 0o100604), "refusing /v/f-wal: permissions 604 allow more than the vault file does"),
        (.insecurePermissions(path: "/v", mode: 0o040777),
         "refusing the vault's directory /v: permissions 777 let group or others write it (chmod go-w, or move the vault)"),
        (.insecurePermissions(path: "/tmp", mode: 0o041777),
         "refusing the vault's directory /tmp: permissions 1777 make it a shared directory others can create files in; keep the vault in a directory of your own (mkdir -m 700 DIR)"),
        (.untrustedOwner(path: "/v/g", uid: 1001), "refusing /v/g: it belongs to another user (uid 1001)"),
        (.symbolicLink(path: "/v/h"), "refusing /v/h: it is a symbolic link; use the file's real path"),
        (.keyChanged, "another process changed the vault's keys, and the passphrase or key this process opened it with does not open it now; open it again with the current one"),
        (.closed, "the vault is closed"),
        (.secretNotUTF8, "the secret is not valid UTF-8 text"),
        (.cryptoUnavailable, "libsodium could not be initialised"),
        (.keyDerivationFailed, "not enough memory for the passphrase key derivation"),
        (.rolledBack(path: "/v/i", seenGeneration: 7, fileGeneration: 3),
         "/v/i is older than a state this user has seen (generation 3, seen 7): it was replaced with an older copy or lost commits from its -wal"),
        (.rolledBack(path: "postgres://u@db:5432/d#v", seenGeneration: 7, fileGeneration: 3),
         "postgres://u@db:5432/d#v is older than a state this user has seen (generation 3, seen 7): it was replaced with an older copy or lost commits"),
        (.rolledBack(path: "/v/i", seenGeneration: 7, fileGeneration: 7),
         "/v/i is not the state this user last saw at generation 7: it was replaced, or lost commits and was written again"),
        (.batchEnded, "a VaultBatch can only be used inside its batch closure, on the closure's thread"),
        (.reentrantCall, "the vault was called from inside its own batch closure; use the VaultBatch instead"),
        (.valueNotEncodable, "the value could not be encoded"),
        (.valueNotDecodable, "the stored secret is not a value of the requested type"),
        (.unsupportedValueEncoding(version: 4), "unsupported value encoding version 4"),
        (.rollbackRecordInvalid(path: "/s/r"),
         "the rollback guard's record /s/r does not authenticate (damaged, replaced, or written under another guard key); it is not taken as missing"),
        (.cancelled, "the task was cancelled before the vault call started; nothing was done"),
        (.versionNotFound, "no such version of the item"),
    ]

    @Test func everyCodeReadsAsBefore() {
        for (error, text) in Self.described { #expect(error.description == text) }
        let allCodes = (0...UInt8.max).compactMap(VaultError.Code.init(rawValue:))
        #expect(Set(Self.described.map(\.0.code)) == Set(allCodes))
    }

    /// The numbers the agent sends: a renumbering would make a client misread an error.
    @Test func codeAndReasonNumbersAreStable() {
        #expect(VaultError.Code.wrongPassphrase.rawValue == 0)
        #expect(VaultError.Code.tampered.rawValue == 9)
        #expect(VaultError.Code.unsupportedValueEncoding.rawValue == 26)
        #expect(VaultError.Code.rollbackRecordInvalid.rawValue == 27)
        #expect(VaultError.Code.cancelled.rawValue == 28)
        #expect(VaultError.Code.versionNotFound.rawValue == 29)
        #expect(VaultError.Code(rawValue: 30) == nil)
        #expect(VaultError.Code.io.description == "io")
        #expect(VaultError.Reason.missingHeader.rawValue == 0)
        #expect(VaultError.Reason.rowsChanged.rawValue == 16)
        #expect(VaultError.Reason.storageStructureRefused.rawValue == 45)
        let reasons = (0...UInt16.max).compactMap(VaultError.Reason.init(rawValue:))
        #expect(VaultError.Reason.notAConnectionString.rawValue == 60)
        #expect(VaultError.Reason.vaultIdentityNotPinned.rawValue == 63)
        #expect(VaultError.Reason.hostPublicKeyLowOrder.rawValue == 68)
        #expect(VaultError.Reason.noEngineForURL.rawValue == 69)
        #expect(VaultError.Reason.invalidWriterName.rawValue == 70)
        #expect(VaultError.Reason.writerFixedByHostKey.rawValue == 71)
        #expect(VaultError.Reason.historyRetentionOutOfRange.rawValue == 72)
        #expect(VaultError.Reason.versionNumberInUse.rawValue == 73)
        #expect(VaultError.Reason.standbyStalenessNotPositive.rawValue == 74)
        #expect(reasons.count == 75)
        #expect(Set(reasons.map(\.description)).count == reasons.count)
    }

    /// A refused key is described by its length only, and text that is not a key is not echoed.
    @Test func refusedKeysLeaveNoTraceInTheError() throws {
        let secretText = "c2VjcmV0LWtleS1tYXRlcmlhbA-not-a-key"
        do {
            _ = try VaultKey(base64: secretText)
            Issue.record("accepted")
        } catch {
            #expect(error == .invalidArgument(.keyNotBase64))
            #expect(!error.description.contains(secretText) && !"\(error)".contains(secretText))
            #expect(error.description == "invalid argument: a vault key must be 44 characters of base64")
        }
        let bytes = Data(repeating: 0xA5, count: 31)
        do {
            _ = try VaultKey(bytes)
            Issue.record("accepted")
        } catch {
            #expect(error == .invalidKeyLength(byteCount: 31))
            #expect(error.code == .invalidArgument && error.reason == .keyLength && error.byteCount == 31)
            #expect(error.description == "invalid argument: a vault key must be exactly 32 bytes, not 31")
            #expect(error.reasonText == "a vault key must be exactly 32 bytes, not 31")
        }
    }

    /// A wrong passphrase's error holds nothing of it.
    @Test func aWrongPassphraseIsNotInTheError() throws {
        let path = TestPaths.temporaryDirectory() + "/p.vault"
        try Vault.create(at: path, passphrase: "correct horse", kdf: KDFParameters(opsLimit: 1, memoryLimit: 8192)).close()
        let passphrase = "battery staple 4711"
        do {
            _ = try Vault.open(at: path, passphrase: passphrase)
            Issue.record("opened")
        } catch {
            #expect(error == .wrongPassphrase)
            #expect(!"\(error) \(String(reflecting: error))".contains(passphrase))
        }
    }

    /// `catch VaultError.x` matches an untyped error, and only an equal one.
    @Test func aWholeErrorMatchesAnUntypedCatch() {
        func classify(_ thrown: any Error) -> String {
            do { throw thrown } catch VaultError.itemNotFound { return "missing" } catch { return "other" }
        }
        #expect(classify(VaultError.itemNotFound) == "missing")
        #expect(classify(VaultError.duplicateItem) == "other")
        #expect(classify(CocoaError(.fileNoSuchFile)) == "other")
    }

    /// The context lives in a box, so an error is small to copy through every `throws`;
    /// equality and hashing still compare values, not boxes.
    @Test func anErrorIsSmallAndComparesByValue() {
        #expect(MemoryLayout<VaultError>.size <= 24)
        let path = "/v/" + String(7)
        let one = VaultError.rolledBack(path: path, seenGeneration: 4, fileGeneration: 2)
        let same = VaultError.rolledBack(path: "/v/7", seenGeneration: 4, fileGeneration: 2)
        #expect(one == same)
        #expect(one.hashValue == same.hashValue)
        #expect(one != .rolledBack(path: "/v/7", seenGeneration: 4, fileGeneration: 3))
        #expect(VaultError.io(path: "/a", errno: ENOENT) != .io(path: "/a", errno: EACCES))
        #expect(Set([one, same, .itemNotFound, .itemNotFound]).count == 2)
        #expect(one.path == "/v/7" && one.seenGeneration == 4 && one.fileGeneration == 2 && one.errno == nil)
    }
}
