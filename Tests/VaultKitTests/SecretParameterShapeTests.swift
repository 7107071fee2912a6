import Foundation
import Synchronization
import Testing
import TestTraits
import VaultKit

/// One shape for a secret parameter: every `set`, `add` and `update`, on `Vault`, its
/// `async` twins, `VaultService` (and its twins) and `VaultBatch`, takes any
/// `SecretBytesConvertible`, and the same secret given as any type is stored as the
/// same bytes.
@Suite(.offCooperativePool) struct SecretParameterShapeTests {
    /// A client's own secret type, counting how often its bytes are asked for.
    final class Token: SecretBytesConvertible, Sendable {
        let raw: SecretBytes
        let conversions = Atomic(0)
        init(_ text: String) { raw = SecretBytes(text) }
        var secretBytes: SecretBytes {
            conversions.add(1, ordering: .relaxed)
            return raw
        }
    }

    /// The bytes every spelling below stands for: not UTF-8, so no type is favoured.
    static let bytes: [UInt8] = [0x00, 0xFF, 0x73, 0x33, 0x63, 0x72, 0x33, 0x74, 0x80]

    /// A value type of the client's, built from raw bytes.
    struct CustomBytes: SecretBytesConvertible {
        let bytes: [UInt8]
        var secretBytes: SecretBytes { SecretBytes(bytes) }
    }

    /// The same secret in each conforming type, by name (`String` when the bytes are UTF-8).
    static func spellings(_ bytes: [UInt8] = bytes) -> [(String, any SecretBytesConvertible)] {
        var spellings: [(String, any SecretBytesConvertible)] = [
            ("Data", Data(bytes)), ("[UInt8]", bytes), ("SecretBytes", SecretBytes(bytes)), ("custom", CustomBytes(bytes: bytes)),
        ]
        if let text = String(validating: bytes, as: UTF8.self) { spellings.append(("String", text)) }
        return spellings
    }

    enum Verb: CaseIterable { case set, add, update }

    /// Each surface that writes an item.
    enum Surface: CaseIterable {
        case vault, vaultAsync, service, serviceAsync, batch

        /// `verb` on this surface, with an existential's opened value.
        func write(_ verb: Verb, _ secret: some SecretBytesConvertible, in vault: Vault, account: String) async throws {
            let service = vault.service("shape")
            switch (self, verb) {
            case (.vaultAsync, .set): try await vault.set(secret, service: "shape", account: account)
            case (.vaultAsync, .add): try await vault.add(secret, service: "shape", account: account)
            case (.vaultAsync, .update): try await vault.update(secret, service: "shape", account: account)
            case (.serviceAsync, .set): try await service.set(secret, account: account)
            case (.serviceAsync, .add): try await service.add(secret, account: account)
            case (.serviceAsync, .update): try await service.update(secret, account: account)
            default: try writeBlocking(verb, secret, in: vault, account: account)
            }
        }

        /// The blocking surfaces (a synchronous function, so the calls are not the twins).
        private func writeBlocking(_ verb: Verb, _ secret: some SecretBytesConvertible, in vault: Vault, account: String) throws {
            let service = vault.service("shape")
            switch (self, verb) {
            case (.vault, .set): try vault.set(secret, service: "shape", account: account)
            case (.vault, .add): try vault.add(secret, service: "shape", account: account)
            case (.vault, .update): try vault.update(secret, service: "shape", account: account)
            case (.service, .set): try service.set(secret, account: account)
            case (.service, .add): try service.add(secret, account: account)
            case (.service, .update): try service.update(secret, account: account)
            case (.batch, .set): try vault.batch { try $0.set(secret, service: "shape", account: account) }
            case (.batch, .add): try vault.batch { try $0.add(secret, service: "shape", account: account) }
            case (.batch, .update): try vault.batch { try $0.update(secret, service: "shape", account: account) }
            default: Issue.record("\(self) is an async surface")
            }
        }
    }

    @Test func everySurfaceAcceptsEveryTypeAndStoresTheSameBytes() async throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let text = Array("s3cr3t, ünïcode".utf8)
        for surface in Surface.allCases {
            for (name, secret) in Self.spellings(text) {
                let account = "\(surface)-\(name)"
                try await surface.write(.add, secret, in: vault, account: account)
                #expect(try await vault.secret(service: "shape", account: account) == SecretBytes(text), "add \(account)")
                try await surface.write(.update, SecretBytes("other"), in: vault, account: account)
                try await surface.write(.update, secret, in: vault, account: account)
                #expect(try await vault.secret(service: "shape", account: account) == SecretBytes(text), "update \(account)")
                try await surface.write(.set, secret, in: vault, account: account + "-set")
                #expect(try await vault.secret(service: "shape", account: account + "-set") == SecretBytes(text), "set \(account)")
            }
        }
        // Binary bytes, which no String spells, through every type but String.
        for surface in Surface.allCases {
            for (name, secret) in Self.spellings() {
                let account = "binary-\(surface)-\(name)"
                try await surface.write(.set, secret, in: vault, account: account)
                #expect(try await vault.data(service: "shape", account: account) == Data(Self.bytes), "set \(account)")
            }
        }
    }

    /// The static types themselves, as a caller writes them, on every surface (the table
    /// above goes through an opened existential, which any generic would accept).
    @Test func literalsAndConcreteTypesCompileOnTheBlockingSurfaces() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api")
        let data = Data([1, 2, 3]), array: [UInt8] = [1, 2, 3], secret = SecretBytes([1, 2, 3])
        try vault.set("a", service: "api", account: "string")
        try vault.set(data, service: "api", account: "data")
        try vault.add(array, service: "api", account: "array")
        try vault.update(secret, service: "api", account: "array")
        try api.add(data, account: "data-service")
        try api.update(array, account: "data-service")
        try api.set("b", account: "string-service")
        try vault.batch { batch in
            try batch.set(data, service: "api", account: "batch-data")
            try batch.add(array, service: "api", account: "batch-array")
            try batch.update(secret, service: "api", account: "batch-data")
            try batch.update("d", service: "api", account: "batch-array")
        }
        #expect(try vault.string(service: "api", account: "string") == "a")
        #expect(try vault.secret(service: "api", account: "array") == secret)
        #expect(try api.data(account: "data-service") == Data(array))
        #expect(try api.string(account: "string-service") == "b")
        #expect(try vault.secret(service: "api", account: "batch-data") == secret)
        #expect(try vault.string(service: "api", account: "batch-array") == "d")
    }

    @Test func literalsAndConcreteTypesCompileOnTheAsyncSurfaces() async throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api")
        let data = Data([1, 2, 3]), array: [UInt8] = [1, 2, 3], secret = SecretBytes([1, 2, 3])
        try await vault.set("a", service: "api", account: "string")
        try await vault.add(data, service: "api", account: "data")
        try await vault.update(array, service: "api", account: "data")
        try await api.set(array, account: "array")
        try await api.add(secret, account: "secret")
        try await api.update("c", account: "array")
        #expect(try await vault.string(service: "api", account: "string") == "a")
        #expect(try await vault.data(service: "api", account: "data") == Data(array))
        #expect(try await api.string(account: "array") == "c")
        #expect(try await api.secret(account: "secret") == secret)
    }

    /// A client's type is asked for its bytes once per write, whatever the surface: an
    /// `async` twin converts before it hops, and nothing converts twice.
    @Test func aCustomTypeIsConvertedOncePerWrite() async throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let token = Token("t0k3n")
        for surface in Surface.allCases {
            let before = token.conversions.load(ordering: .relaxed)
            try await surface.write(.set, token, in: vault, account: "\(surface)")
            try await surface.write(.update, token, in: vault, account: "\(surface)")
            #expect(token.conversions.load(ordering: .relaxed) - before == 2, "\(surface)")
            #expect(try await vault.string(service: "shape", account: "\(surface)") == "t0k3n")
        }
    }
}
