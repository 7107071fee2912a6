internal import CSodium

/// The keys an unlocked vault works with, all derived from its random master key.
///
/// One key per purpose (docs/FORMAT.md section 3): items are sealed with one subkey and looked up
/// with another, a third is stored in the header as a check value so a process
/// can tell that another one has re-keyed the vault, and a fourth authenticates the
/// vault-wide manifest (see `ManifestHash.swift`). Subkeys come from
/// `crypto_kdf_derive_from_key` with the context `"VaultKit"`.
struct KeyHierarchy: Sendable {
    static let context = "VaultKit"
    enum SubkeyID: UInt64 {
        case itemSealing = 1
        case lookupIndex = 2
        case keyCheck = 3
        case manifest = 4
    }

    let masterKey: SecureBuffer
    let sealingKey: SecureBuffer
    let indexKey: SecureBuffer
    let keyCheck: [UInt8]
    let manifestKey: SecureBuffer

    init(masterKey: SecureBuffer) {
        self.masterKey = masterKey
        sealingKey = Self.derive(.itemSealing, from: masterKey)
        indexKey = Self.derive(.lookupIndex, from: masterKey)
        manifestKey = Self.derive(.manifest, from: masterKey)
        keyCheck = Self.derive(.keyCheck, from: masterKey).withBytes { Array($0) }
    }

    /// The key that wraps the master key in a vault of `formatVersion`: from format 3 on
    /// `BLAKE2b-256(key = KEK, "VaultKit key wrapping, format 3")`, before it the KEK itself.
    ///
    /// Why: a format-3 file rewritten to claim an older version (whose manifest is weaker
    /// or absent) must not unlock under the older rules. Its master key opens only under
    /// this derived key, which the older rules never use, so the downgrade fails to
    /// unwrap, and VaultKit reports it as tampering instead of reading a weakened vault.
    static func wrappingKey(keyEncryptionKey: SecureBuffer, formatVersion: Int) -> SecureBuffer {
        guard formatVersion >= VaultHeader.boundWrappingFormatVersion else { return keyEncryptionKey }
        let label = Array("VaultKit key wrapping, format 3".utf8)
        return SecureBuffer(count: 32, lockInMemory: true) { output in
            keyEncryptionKey.withBytes { key in
                _ = crypto_generichash(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    label, UInt64(label.count),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count
                )
            }
        }
    }

    /// A new random master key, locked in memory.
    static func randomMasterKey() -> SecureBuffer {
        SecureBuffer(count: SecretBox.keyByteCount, lockInMemory: true) { Sodium.randomBytes($0) }
    }

    private static func derive(_ id: SubkeyID, from masterKey: SecureBuffer) -> SecureBuffer {
        SecureBuffer(count: 32, lockInMemory: true) { subkey in
            masterKey.withBytes { master in
                _ = context.withCString { ctx in
                    crypto_kdf_derive_from_key(
                        subkey.baseAddress!.assumingMemoryBound(to: UInt8.self), subkey.count,
                        id.rawValue, ctx,
                        master.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    )
                }
            }
        }
    }

    // MARK: Lookup index

    /// The row key of an item: keyed BLAKE2b-256 of `0x01 || len(service) || service || len(account) || account`.
    func lookupID(service: String, account: String) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            keyedHash(domain: 0x01, service, account, into: output.baseAddress!)
            initialized = 32
        }
    }

    /// The tag shared by all items of one service (`0x02 || len(service) || service`),
    /// so they can be found without decrypting every row.
    func serviceTag(service: String) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            keyedHash(domain: 0x02, service, nil, into: output.baseAddress!)
            initialized = 32
        }
    }

    /// Whether `lookupID` is the row key of (`service`, `account`), computed on the
    /// stack: opening a record checks this binding on every read.
    func isLookupID(_ lookupID: [UInt8], service: String, account: String) -> Bool {
        matches(lookupID, domain: 0x01, service, account)
    }

    /// Whether `tag` is the service tag of `service`, computed on the stack.
    func isServiceTag(_ tag: [UInt8], service: String) -> Bool {
        matches(tag, domain: 0x02, service, nil)
    }

    // MARK: History (docs/FORMAT.md section 14)

    /// The row key of an item's kept version `number`: `0x05 || lp(service) || lp(account) || u64le(number)`.
    func versionLookupID(service: String, account: String, number: UInt64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            keyedHash(domain: 0x05, service, account, number: number, into: output.baseAddress!)
            initialized = 32
        }
    }

    /// The tag all kept versions of one item share (`0x06 || lp(service) || lp(account)`),
    /// in the service tag column: the item's history is found through the service tag
    /// index, and never shows among a service's items.
    func historyTag(service: String, account: String) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            keyedHash(domain: 0x06, service, account, into: output.baseAddress!)
            initialized = 32
        }
    }

    /// Whether `lookupID` is the row key of version `number` of (`service`, `account`).
    func isVersionLookupID(_ lookupID: [UInt8], service: String, account: String, number: UInt64) -> Bool {
        matches(lookupID, domain: 0x05, service, account, number: number)
    }

    /// Whether `tag` is the history tag of (`service`, `account`).
    func isHistoryTag(_ tag: [UInt8], service: String, account: String) -> Bool {
        matches(tag, domain: 0x06, service, account)
    }

    /// The row key of the vault's settings row: keyed BLAKE2b-256 of the one byte `0x07`.
    var settingsLookupID: [UInt8] { domainHash(0x07) }

    /// The service tag of the settings row: keyed BLAKE2b-256 of the one byte `0x08`.
    var settingsTag: [UInt8] { domainHash(0x08) }

    private func domainHash(_ domain: UInt8) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, initialized in
            var message = domain
            indexKey.withBytes { key in
                _ = crypto_generichash(output.baseAddress!, 32, &message, 1, key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
            }
            initialized = 32
        }
    }

    private func matches(_ expected: [UInt8], domain: UInt8, _ first: String, _ second: String?, number: UInt64? = nil) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
            keyedHash(domain: domain, first, second, number: number, into: digest.baseAddress!)
            return expected.withUnsafeBytes { Sodium.constantTimeEqual($0, UnsafeRawBufferPointer(digest)) }
        }
    }

    /// One-shot `crypto_generichash` (BLAKE2b, 32-byte output) keyed with the index key
    /// over a domain byte and 4-byte little-endian length-prefixed UTF-8 strings (then a
    /// version number, for a kept version's row), so ("ab", "c") and ("a", "bc") never
    /// hash alike. The message is assembled on the stack and wiped; the digest goes to
    /// `output`, so a comparison needs no heap.
    private func keyedHash(domain: UInt8, _ first: String, _ second: String?, number: UInt64? = nil, into output: UnsafeMutablePointer<UInt8>) {
        let messageCount = 1 + 4 + first.utf8.count + (second.map { 4 + $0.utf8.count } ?? 0) + (number == nil ? 0 : 8)
        withUnsafeTemporaryAllocation(byteCount: messageCount, alignment: 8) { message in
            var writer = ByteWriter(message)
            writer.write(domain)
            writer.writeLengthPrefixed(first)
            if let second { writer.writeLengthPrefixed(second) }
            if let number { writer.write(number) }
            indexKey.withBytes { key in
                _ = crypto_generichash(
                    output, 32,
                    message.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(messageCount),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count
                )
            }
            Sodium.zero(message)
        }
    }
}
