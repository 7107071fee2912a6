import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
import VaultAgent

/// The agent's message decoders on every kind of message, and on random and mutated
/// bytes: they return a message or throw ``MalformedMessage``, never crash, and what
/// they accept encodes back to the same bytes.
@Suite(.offCooperativePool) struct AgentProtocolTests {
    static let target = VaultTarget(device: 42, inode: 7, path: "/home/alice/a.vault")
    static let item = VaultItem(
        service: "api.example.com", account: "ålice\t", label: nil, generic: Data([0xff, 0]),
        created: Date(timeIntervalSinceReferenceDate: 817_000_000.123_456), modified: Date(timeIntervalSinceReferenceDate: 817_000_001)
    )

    static let version = VaultItemVersion(
        number: 2, item: item, writer: "alice@laptop", operation: .restore, archived: nil, archivedBy: nil, archivedBecause: nil, secretSize: 64
    )
    static let change = VaultChange(
        date: Date(timeIntervalSinceReferenceDate: 817_000_003), writer: "w", operation: .update, service: "s", account: "", version: 9
    )

    static var requests: [AgentRequest] {
        [
            .status, .stop, .lock(path: nil), .lock(path: "/v"),
            .unlock(path: "/v", credential: SecretBytes("pass"), isKey: false, idleTimeoutSeconds: 900),
            .holds(target), .contains(target, service: "s", account: "a"), .secret(target, service: "s", account: ""),
            .item(target, service: "s", account: "a"),
            .write(target, mode: .add, keepHistory: true, writer: nil, secret: SecretBytes([0, 1, 2]), service: "s", account: "a", label: "L", generic: nil),
            .write(target, mode: .update, keepHistory: false, writer: "ci@runner-7", secret: SecretBytes(""), service: "s", account: "a", label: nil, generic: Data("g".utf8)),
            .delete(target, keepHistory: true, writer: nil, service: "s", account: "a"),
            .delete(target, keepHistory: false, writer: "w", service: "s", account: "a"),
            .deleteAll(target, keepHistory: true, writer: "w", service: "s"), .items(target, service: nil),
            .items(target, service: "s"), .verify(target),
            .history(target, service: "s", account: "a"), .version(target, service: "s", account: "a", number: 3),
            .restore(target, writer: nil, service: "s", account: "", number: .max), .restore(target, writer: "w", service: "s", account: "a", number: 1), .purgeHistory(target, service: "s", account: "a"),
            .purgeHistory(target, service: nil, account: nil), .changes(target, limit: nil), .changes(target, limit: 20),
            .retention(target), .setRetention(target, versions: 0),
        ]
    }

    static var responses: [AgentResponse] {
        [
            .ok, .bool(true), .count(3), .secret(SecretBytes("s3cr3t")), .item(item), .items([item, item]), .items([]),
            .status(pid: 99, vaults: [HeldVaultStatus(path: "/v", idleTimeoutSeconds: 900, secondsUntilLocked: 12)]),
            .notHeld, .failure(.itemNotFound), .failure(.io(path: "/v", errno: 13)), .failure(.insecurePermissions(path: "/d", mode: 0o40777)),
            .failure(.unsupportedFormatVersion(9)), .refused("no"),
            .versions([version, VaultItemVersion(number: 1, item: item, writer: "", operation: .set, archived: Date(timeIntervalSinceReferenceDate: 817_000_002.5),
                                                 archivedBy: "ci@runner", archivedBecause: .delete, secretSize: 0)]),
            .versions([]), .itemWithSecret(item, SecretBytes([0xff, 0])), .changes([change, change]), .changes([]),
        ]
    }

    @Test func everyMessageSurvivesTheRoundTrip() throws {
        for request in Self.requests {
            let bytes = contents(request.encode())
            let decoded = try bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            #expect(contents(decoded.encode()) == bytes)
        }
        for response in Self.responses {
            let bytes = contents(response.encode())
            let decoded = try bytes.withUnsafeBytes { try AgentResponse.decode($0) }
            #expect(contents(decoded.encode()) == bytes)
        }
        let item = try contents(AgentResponse.item(Self.item).encode()).withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .item(let decoded) = item else { Issue.record("not an item"); return }
        #expect(decoded == Self.item)
        let versions = try contents(AgentResponse.versions([Self.version]).encode()).withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .versions(let decodedVersions) = versions else { Issue.record("not versions"); return }
        #expect(decodedVersions == [Self.version])
        let changes = try contents(AgentResponse.changes([Self.change]).encode()).withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .changes(let decodedChanges) = changes else { Issue.record("not changes"); return }
        #expect(decodedChanges == [Self.change])
    }

    @Test func everyVaultErrorSurvivesTheRoundTrip() throws {
        let errors: [VaultError] = [
            .wrongPassphrase, .itemNotFound, .duplicateItem, .vaultNotFound(path: "/a"), .vaultAlreadyExists(path: "/b"),
            .notAVault(path: "/c"), .unsupportedFormatVersion(-1), .formatUpgradeRequired(version: 1), .corrupted(reason: .missingHeader),
            .corrupted(reason: .storageDamaged), .tampered(reason: .rowsChanged), .io(path: "/d", errno: 5), .invalidArgument(.emptyService),
            .invalidKeyLength(byteCount: 31), .busy(path: "/e"),
            .insecurePermissions(path: "/f", mode: 0o100666), .untrustedOwner(path: "/g", uid: 1000), .symbolicLink(path: "/h"),
            .keyChanged, .closed, .secretNotUTF8, .cryptoUnavailable, .keyDerivationFailed,
            .rolledBack(path: "/i", seenGeneration: 7, fileGeneration: 3), .batchEnded, .reentrantCall,
            .valueNotEncodable, .valueNotDecodable, .unsupportedValueEncoding(version: 2), .rollbackRecordInvalid(path: "/j"),
            .cancelled, .versionNotFound,
        ]
        let allCodes = (0...UInt8.max).compactMap(VaultError.Code.init(rawValue:))
        #expect(Set(errors.map(\.code)) == Set(allCodes))
        for error in errors {
            let bytes = contents(AgentResponse.failure(error).encode())
            let decoded = try bytes.withUnsafeBytes { try AgentResponse.decode($0) }
            guard case .failure(let back) = decoded else { Issue.record("\(error): not a failure"); continue }
            #expect(back == error)
        }
    }

    /// Random bodies, and valid messages with bytes changed, cut or appended.
    @Test func randomAndMutatedBytesAreRefusedOrAcceptedButNeverCrash() {
        var random = SplitMix64(seed: 0xA6E7_0001)
        let valid = Self.requests.map { contents($0.encode()) } + Self.responses.map { contents($0.encode()) }
        var accepted = 0, refused = 0
        for round in 0..<200_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...48, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if round % 4 == 0, !bytes.isEmpty { bytes[0] = AgentProtocol.version }
            } else {
                bytes = valid[Int.random(in: 0..<valid.count, using: &random)]
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
                default: bytes.append(UInt8.random(in: 0...255, using: &random))
                }
            }
            for decode in [Self.decodeRequest, Self.decodeResponse] {
                if let reencoded = decode(bytes) {
                    accepted += 1
                    #expect(decode(reencoded) == reencoded, "round \(round)")
                } else {
                    refused += 1
                }
            }
        }
        #expect(accepted > 1000 && refused > 1000)
    }

    /// The message's encoding after decoding, or `nil` when it was refused.
    static func decodeRequest(_ bytes: [UInt8]) -> [UInt8]? {
        (try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }).map { contents($0.encode()) }
    }

    static func decodeResponse(_ bytes: [UInt8]) -> [UInt8]? {
        (try? bytes.withUnsafeBytes { try AgentResponse.decode($0) }).map { contents($0.encode()) }
    }

    /// A count larger than the message could hold is refused before anything is reserved.
    @Test func aHostileCountIsRefused() {
        let bytes: [UInt8] = [AgentProtocol.version, 5, 0xff, 0xff, 0xff, 0xff]
        #expect(throws: MalformedMessage.self) { try bytes.withUnsafeBytes { try AgentResponse.decode($0) } }
    }

    /// A failure travels as numbers: an unknown code or reason, or a detail on a reason
    /// that has none, is refused rather than guessed at.
    @Test func aFailureIsCodeReasonAndDetail() throws {
        let tampered: [UInt8] = [AgentProtocol.version, 8, 9, 0, 0, 0, 16] + [UInt8](repeating: 0, count: 8)
        let decoded = try tampered.withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .failure(let error) = decoded else { Issue.record("not a failure"); return }
        #expect(error == .tampered(reason: .rowsChanged))
        #expect(contents(AgentResponse.failure(error).encode()) == tampered)
        let refused: [[UInt8]] = [
            [AgentProtocol.version, 8, 200],  // unknown code
            [AgentProtocol.version, 8, 9, 0, 0, 0xff, 0xff] + [UInt8](repeating: 0, count: 8),  // unknown reason
            [AgentProtocol.version, 8, 9, 0, 0, 0, 16] + [UInt8](repeating: 0, count: 7) + [1],  // a detail on rowsChanged
        ]
        for bytes in refused {
            #expect(throws: MalformedMessage.self) { try bytes.withUnsafeBytes { try AgentResponse.decode($0) } }
        }
    }
}

/// A copy of the buffer's bytes.
func contents(_ buffer: SecretBytes) -> [UInt8] {
    buffer.withUnsafeBytes { Array($0) }
}
