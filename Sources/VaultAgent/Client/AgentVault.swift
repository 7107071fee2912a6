#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// A vault held by the agent, seen from a client: each operation is one request.
///
/// When the agent answers that it no longer holds the vault (locked, timed out, file
/// replaced), the operation and all later ones run on the vault opened here, exactly
/// as without an agent: a command never fails because the agent let go.
package final class AgentVault: ItemStore {
    private let connection: AgentConnection
    private let target: VaultTarget
    private let openHere: () throws -> Vault
    /// The writer name this command declared, which the agent records for its writes.
    private let writer: String?
    private var opened: Vault?

    private init(connection: AgentConnection, target: VaultTarget, writer: String?, openHere: @escaping () throws -> Vault) {
        self.connection = connection
        self.target = target
        self.writer = writer
        self.openHere = openHere
    }

    /// The vault `target` names as held by the agent at `socketPath`, or `nil` when there
    /// is no such vault (`target` is `nil`) or no agent of this user holds it (then the
    /// command does everything itself, as it always did).
    ///
    /// `writer` is the name the command's writes record (`nil`: the agent's handle's own,
    /// as an opened vault's default); `openHere` declares it on a vault opened here.
    package static func ifHeld(_ target: VaultTarget?, socketPath: String, writer: String? = nil, openHere: @escaping () throws -> Vault) -> AgentVault? {
        guard let target else { return nil }
        guard let connection = try? AgentConnection(socketPath: socketPath) else { return nil }
        guard case .ok? = try? connection.send(.holds(target)) else { return nil }
        return AgentVault(connection: connection, target: target, writer: writer, openHere: openHere)
    }

    /// Sends `request` and hands the answer to `decode`, or runs `here` on the vault
    /// opened in this process once the agent no longer holds it.
    private func perform<Result>(
        _ request: (VaultTarget) -> AgentRequest,
        here: (Vault) throws -> Result,
        decode: (AgentResponse) -> Result?
    ) throws -> Result {
        if let opened { return try here(opened) }
        let response = try connection.send(request(target))
        switch response {
        case .notHeld:
            let vault = try openHere()
            opened = vault
            return try here(vault)
        case .failure(let error):
            throw error
        case .refused(let reason):
            throw AgentError.refused(reason: reason)
        default:
            guard let result = decode(response) else { throw AgentError.brokenConnection(reason: "an answer that does not fit the request") }
            return result
        }
    }

    package func contains(service: String, account: String) throws -> Bool {
        try perform({ .contains($0, service: service, account: account) }, here: { try $0.contains(service: service, account: account) }) {
            if case .bool(let value) = $0 { value } else { nil }
        }
    }

    package func secret(service: String, account: String) throws -> SecretBytes {
        try perform({ .secret($0, service: service, account: account) }, here: { try $0.secret(service: service, account: account) }) {
            if case .secret(let value) = $0 { value } else { nil }
        }
    }

    package func item(service: String, account: String) throws -> VaultItem {
        try perform({ .item($0, service: service, account: account) }, here: { try $0.item(service: service, account: account) }) {
            if case .item(let value) = $0 { value } else { nil }
        }
    }

    package func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws {
        try write(.set, secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    package func add(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws {
        try write(.add, secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    package func update(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws {
        try write(.update, secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    private func write(_ mode: WriteMode, _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws {
        let request = { [writer] (target: VaultTarget) in
            AgentRequest.write(target, mode: mode, keepHistory: keepHistory, writer: writer, secret: secret, service: service, account: account, label: label, generic: generic)
        }
        try perform(request, here: { vault in
            switch mode {
            case .set: try vault.set(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            case .add: try vault.add(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            case .update: try vault.update(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            }
        }) {
            if case .ok = $0 { () } else { nil }
        }
    }

    package func delete(service: String, account: String, keepHistory: Bool) throws -> Bool {
        try perform({ .delete($0, keepHistory: keepHistory, writer: writer, service: service, account: account) }, here: { try $0.delete(service: service, account: account, keepHistory: keepHistory) }) {
            if case .bool(let value) = $0 { value } else { nil }
        }
    }

    package func deleteAll(service: String, keepHistory: Bool) throws -> Int {
        try perform({ .deleteAll($0, keepHistory: keepHistory, writer: writer, service: service) }, here: { try $0.deleteAll(service: service, keepHistory: keepHistory) }) {
            if case .count(let value) = $0 { Int(exactly: value) } else { nil }
        }
    }

    package func items(service: String?) throws -> [VaultItem] {
        try perform({ .items($0, service: service) }, here: { try $0.items(service: service) }) {
            if case .items(let value) = $0 { value } else { nil }
        }
    }

    package func verify() throws -> Int {
        try perform({ .verify($0) }, here: { try $0.verify() }) {
            if case .count(let value) = $0 { Int(exactly: value) } else { nil }
        }
    }

    package func history(service: String, account: String) throws -> [VaultItemVersion] {
        try perform({ .history($0, service: service, account: account) }, here: { try $0.history(service: service, account: account) }) {
            if case .versions(let value) = $0 { value } else { nil }
        }
    }

    package func itemWithSecret(service: String, account: String, version: UInt64) throws -> (item: VaultItem, secret: SecretBytes) {
        try perform({ .version($0, service: service, account: account, number: version) }, here: { try $0.itemWithSecret(service: service, account: account, version: version) }) {
            if case .itemWithSecret(let item, let secret) = $0 { (item, secret) } else { nil }
        }
    }

    package func restore(service: String, account: String, version: UInt64) throws {
        try perform({ .restore($0, writer: writer, service: service, account: account, number: version) }, here: { try $0.restore(service: service, account: account, version: version) }) {
            if case .ok = $0 { () } else { nil }
        }
    }

    package func purgeHistory(of item: (service: String, account: String)?) throws -> Int {
        try perform({ .purgeHistory($0, service: item?.service, account: item?.account) }, here: { try $0.purgeHistory(of: item) }) {
            if case .count(let value) = $0 { Int(exactly: value) } else { nil }
        }
    }

    package func changes(limit: Int?) throws -> [VaultChange] {
        try perform({ .changes($0, limit: limit.map { UInt64(max($0, 0)) }) }, here: { try $0.changes(limit: limit) }) {
            if case .changes(let value) = $0 { value } else { nil }
        }
    }

    package func historyRetention() throws -> Int {
        try perform({ .retention($0) }, here: { try $0.historyRetention() }) {
            if case .count(let value) = $0 { Int(exactly: value) } else { nil }
        }
    }

    package func setHistoryRetention(_ versions: Int) throws {
        try perform({ .setRetention($0, versions: UInt64(max(versions, 0))) }, here: { try $0.setHistoryRetention(versions) }) {
            if case .ok = $0 { () } else { nil }
        }
    }

    package func close() {
        opened?.close()
    }
}
