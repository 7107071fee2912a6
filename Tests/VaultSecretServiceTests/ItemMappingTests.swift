import Foundation
import Testing
@testable import VaultSecretService

/// Which vault names Secret Service attributes map to (docs/CLI.md, "vault secret-service").
@Suite struct ItemMappingTests {
    @Test func clientsSchemasMapToServiceAndAccount() {
        // secret-tool store service S username U
        #expect(ItemNames.preferred(for: ["service": "api.example.com", "username": "alice"]) == ("api.example.com", "alice"))
        // Python keyring's SecretService backend
        #expect(ItemNames.preferred(for: ["application": "Python keyring library", "service": "svc", "username": "bob"]) == ("svc", "bob"))
        // git-credential-libsecret (org.git.Password)
        #expect(ItemNames.preferred(for: ["xdg:schema": "org.git.Password", "protocol": "https", "server": "github.com", "user": "carol"]) == ("github.com", "carol"))
        // docker-credential-secretservice (io.docker.Credentials)
        #expect(ItemNames.preferred(for: ["label": "Docker Credentials", "server": "registry.example.com", "username": "dan", "docker_cli": "1"]) == ("registry.example.com", "dan"))
        #expect(ItemNames.preferred(for: ["xdg:schema": "org.example.Schema", "number": "1"]) == ("org.example.Schema", ""))
        #expect(ItemNames.preferred(for: [:]) == ("secret-service", ""))
        #expect(ItemNames.preferred(for: ["service": "", "application": "app"]) == ("app", ""))
    }

    @Test func aSecondItemWithTheSameNamesGetsANumberedAccount() {
        let taken: Set<String> = ["alice", "alice (2)"]
        #expect(ItemNames.unused(for: ["service": "s", "username": "alice"]) { $0 == "s" && taken.contains($1) } == ("s", "alice (3)"))
        #expect(ItemNames.unused(for: ["service": "s", "username": "bob"]) { $0 == "s" && taken.contains($1) } == ("s", "bob"))
    }

    @Test func metadataRoundTripsThroughGenericData() {
        let metadata = ItemMetadata(attributes: ["service": "s", "\u{1F511} key": "välue\n\"quoted\""], contentType: "data/null")
        let encoded = metadata.encoded()
        #expect(encoded.starts(with: Array("org.freedesktop.Secret.Item/1\n".utf8)))
        #expect(ItemMetadata.decoded(from: encoded) == metadata)
    }

    @Test func otherGenericDataIsNotMetadata() {
        #expect(ItemMetadata.decoded(from: nil) == nil)
        #expect(ItemMetadata.decoded(from: Data("{\"attributes\":{}}".utf8)) == nil)
        #expect(ItemMetadata.decoded(from: Data("org.freedesktop.Secret.Item/1\nnot json".utf8)) == nil)
        #expect(ItemMetadata.implied(service: "s", account: "a") == ItemMetadata(attributes: ["service": "s", "username": "a"], contentType: "text/plain"))
    }

    @Test func itemPathsParseOnlyTheirOwnNumbers() {
        #expect(ObjectPaths.itemID(in: ObjectPaths.item(42)) == 42)
        #expect(ObjectPaths.itemID(in: "/org/freedesktop/secrets/aliases/default/i7") == 7)
        for path in ["/org/freedesktop/secrets/collection/vault/i0", "/org/freedesktop/secrets/collection/vault/i01", "/org/freedesktop/secrets/collection/vault/i",
                     "/org/freedesktop/secrets/collection/vault/i1x", "/org/freedesktop/secrets/collection/vault/i99999999999", "/not/existing/path"] {
            #expect(ObjectPaths.itemID(in: path) == nil, "\(path)")
        }
    }
}
