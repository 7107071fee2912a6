#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// The version byte every message starts with; a change to any message bumps it.
package enum AgentProtocol {
    package static let version: UInt8 = 3
    /// The largest request: a 64 MiB secret, two names of 64 KiB, and room for the rest.
    package static let maximumRequestSize = 66 * 1024 * 1024
    /// The largest response: a listing of a very large vault.
    package static let maximumResponseSize = 1024 * 1024 * 1024
}

/// Which vault a request is for: the file's identity as the client sees it, and the
/// path the client was given (errors from the agent name that path, not the agent's).
///
/// A vault at an engine's URL has no device or inode: its target has 0 for both (no file
/// has inode 0) and its URL without a password (the location's `description`) as the path.
package struct VaultTarget: Equatable {
    package var device: UInt64
    package var inode: UInt64
    package var path: String

    package init(device: UInt64, inode: UInt64, path: String) {
        self.device = device
        self.inode = inode
        self.path = path
    }

    /// The target of the vault at an engine's URL that `Vault.location` names `description`.
    package static func databaseVault(_ description: String) -> VaultTarget {
        VaultTarget(device: 0, inode: 0, path: description)
    }

    package var isDatabaseVault: Bool { device == 0 && inode == 0 }
}

/// How `vault set`, `add` and `update` differ.
package enum WriteMode: UInt8 {
    case set = 0, add = 1, update = 2
}

/// A client's request. Secrets (a passphrase, a key, an item's secret) only ever
/// travel client → agent; the master key never travels at all.
package enum AgentRequest {
    case status
    /// `path` is absolute; `key` tells whether `credential` is a raw key or a passphrase.
    case unlock(path: String, credential: SecretBytes, isKey: Bool, idleTimeoutSeconds: UInt64)
    /// `nil` locks every vault.
    case lock(path: String?)
    case stop
    case holds(VaultTarget)
    case contains(VaultTarget, service: String, account: String)
    case secret(VaultTarget, service: String, account: String)
    case item(VaultTarget, service: String, account: String)
    /// `writer`: the name the change records (`nil`: the agent's default, as the vault's).
    case write(VaultTarget, mode: WriteMode, keepHistory: Bool, writer: String?, secret: SecretBytes, service: String, account: String, label: String?, generic: Data?)
    case delete(VaultTarget, keepHistory: Bool, writer: String?, service: String, account: String)
    case deleteAll(VaultTarget, keepHistory: Bool, writer: String?, service: String)
    case items(VaultTarget, service: String?)
    case verify(VaultTarget)
    case history(VaultTarget, service: String, account: String)
    case version(VaultTarget, service: String, account: String, number: UInt64)
    case restore(VaultTarget, writer: String?, service: String, account: String, number: UInt64)
    /// Both names, or neither (every item's history).
    case purgeHistory(VaultTarget, service: String?, account: String?)
    case changes(VaultTarget, limit: UInt64?)
    case retention(VaultTarget)
    case setRetention(VaultTarget, versions: UInt64)

    package var opcode: UInt8 {
        switch self {
        case .status: 0x01
        case .unlock: 0x02
        case .lock: 0x03
        case .stop: 0x04
        case .holds: 0x10
        case .contains: 0x11
        case .secret: 0x12
        case .item: 0x13
        case .write: 0x14
        case .delete: 0x15
        case .deleteAll: 0x16
        case .items: 0x17
        case .verify: 0x18
        case .history: 0x19
        case .version: 0x1A
        case .restore: 0x1B
        case .purgeHistory: 0x1C
        case .changes: 0x1D
        case .retention: 0x1E
        case .setRetention: 0x1F
        }
    }

    /// Whether carrying out the request changes the vault's items.
    package var changesItems: Bool {
        switch self {
        case .write, .delete, .deleteAll, .restore, .purgeHistory, .setRetention: true
        default: false
        }
    }

    /// The vault an item request is for, `nil` for requests about the agent itself.
    package var target: VaultTarget? {
        switch self {
        case .status, .unlock, .lock, .stop: nil
        case .holds(let target), .contains(let target, _, _), .secret(let target, _, _), .item(let target, _, _),
             .write(let target, _, _, _, _, _, _, _, _), .delete(let target, _, _, _, _), .deleteAll(let target, _, _, _),
             .items(let target, _), .verify(let target), .history(let target, _, _), .version(let target, _, _, _),
             .restore(let target, _, _, _, _), .purgeHistory(let target, _, _), .changes(let target, _), .retention(let target),
             .setRetention(let target, _):
            target
        }
    }

    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(MalformedMessage) -> AgentRequest {
        var reader = WireReader(bytes)
        let version = try reader.u8()
        guard version == AgentProtocol.version else { throw MalformedMessage(reason: "unsupported protocol version \(version)") }
        let opcode = try reader.u8()
        func target() throws(MalformedMessage) -> VaultTarget {
            VaultTarget(device: try reader.u64(), inode: try reader.u64(), path: try reader.string())
        }
        let request: AgentRequest
        switch opcode {
        case 0x01: request = .status
        case 0x02:
            let path = try reader.string()
            let isKey = try reader.flag()
            request = .unlock(path: path, credential: try reader.secret(), isKey: isKey, idleTimeoutSeconds: try reader.u64())
        case 0x03: request = .lock(path: try reader.optionalString())
        case 0x04: request = .stop
        case 0x10: request = .holds(try target())
        case 0x11: request = .contains(try target(), service: try reader.string(), account: try reader.string())
        case 0x12: request = .secret(try target(), service: try reader.string(), account: try reader.string())
        case 0x13: request = .item(try target(), service: try reader.string(), account: try reader.string())
        case 0x14:
            let target = try target()
            guard let mode = WriteMode(rawValue: try reader.u8()) else { throw MalformedMessage(reason: "unknown write mode") }
            let keepHistory = try reader.flag(), writer = try reader.optionalString()
            let service = try reader.string(), account = try reader.string()
            let label = try reader.optionalString(), generic = try reader.optionalData()
            request = .write(
                target, mode: mode, keepHistory: keepHistory, writer: writer, secret: try reader.secret(),
                service: service, account: account, label: label, generic: generic
            )
        case 0x15:
            request = .delete(try target(), keepHistory: try reader.flag(), writer: try reader.optionalString(), service: try reader.string(), account: try reader.string())
        case 0x16: request = .deleteAll(try target(), keepHistory: try reader.flag(), writer: try reader.optionalString(), service: try reader.string())
        case 0x17: request = .items(try target(), service: try reader.optionalString())
        case 0x18: request = .verify(try target())
        case 0x19: request = .history(try target(), service: try reader.string(), account: try reader.string())
        case 0x1A: request = .version(try target(), service: try reader.string(), account: try reader.string(), number: try reader.u64())
        case 0x1B:
            request = .restore(try target(), writer: try reader.optionalString(), service: try reader.string(), account: try reader.string(), number: try reader.u64())
        case 0x1C:
            let target = try target()
            let service = try reader.optionalString(), account = try reader.optionalString()
            guard (service == nil) == (account == nil) else { throw MalformedMessage(reason: "a purge names both the service and the account, or neither") }
            request = .purgeHistory(target, service: service, account: account)
        case 0x1D: request = .changes(try target(), limit: try reader.flag() ? try reader.u64() : nil)
        case 0x1E: request = .retention(try target())
        case 0x1F: request = .setRetention(try target(), versions: try reader.u64())
        default: throw MalformedMessage(reason: "unknown request \(opcode)")
        }
        try reader.expectEnd()
        return request
    }
}

/// One vault the agent holds, as `vault agent status` shows it.
package struct HeldVaultStatus: Equatable {
    package var path: String
    package var idleTimeoutSeconds: UInt64
    package var secondsUntilLocked: UInt64

    package init(path: String, idleTimeoutSeconds: UInt64, secondsUntilLocked: UInt64) {
        self.path = path
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.secondsUntilLocked = secondsUntilLocked
    }
}

/// The agent's answer to one request.
package enum AgentResponse {
    case ok
    case bool(Bool)
    case count(UInt64)
    case secret(SecretBytes)
    case item(VaultItem)
    case items([VaultItem])
    case status(pid: Int32, vaults: [HeldVaultStatus])
    case versions([VaultItemVersion])
    case itemWithSecret(VaultItem, SecretBytes)
    case changes([VaultChange])
    /// The agent does not hold this vault (never unlocked, locked, timed out, replaced or
    /// re-keyed with another passphrase): the client does the work itself, as without an agent.
    case notHeld
    /// The vault operation failed; the client reports it exactly as if it had failed there.
    case failure(VaultError)
    /// The request was malformed or not allowed; the reason never holds the request's bytes.
    case refused(String)

    package var tag: UInt8 {
        switch self {
        case .ok: 0
        case .bool: 1
        case .count: 2
        case .secret: 3
        case .item: 4
        case .items: 5
        case .status: 6
        case .notHeld: 7
        case .failure: 8
        case .refused: 9
        case .versions: 10
        case .itemWithSecret: 11
        case .changes: 12
        }
    }

    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(MalformedMessage) -> AgentResponse {
        var reader = WireReader(bytes)
        let version = try reader.u8()
        guard version == AgentProtocol.version else { throw MalformedMessage(reason: "unsupported protocol version \(version)") }
        let response: AgentResponse
        switch try reader.u8() {
        case 0: response = .ok
        case 1: response = .bool(try reader.flag())
        case 2: response = .count(try reader.u64())
        case 3: response = .secret(try reader.secret())
        case 4: response = .item(try reader.item())
        case 5:
            var items: [VaultItem] = []
            for _ in 0..<(try reader.count(minimumElementSize: 26)) { items.append(try reader.item()) }
            response = .items(items)
        case 6:
            let pid = Int32(bitPattern: try reader.u32())
            var vaults: [HeldVaultStatus] = []
            for _ in 0..<(try reader.count(minimumElementSize: 20)) {
                vaults.append(HeldVaultStatus(path: try reader.string(), idleTimeoutSeconds: try reader.u64(), secondsUntilLocked: try reader.u64()))
            }
            response = .status(pid: pid, vaults: vaults)
        case 7: response = .notHeld
        case 8: response = .failure(try WireVaultError.decode(&reader))
        case 9: response = .refused(try reader.string())
        case 10:
            var versions: [VaultItemVersion] = []
            for _ in 0..<(try reader.count(minimumElementSize: 56)) { versions.append(try reader.version()) }
            response = .versions(versions)
        case 11:
            let item = try reader.item()
            response = .itemWithSecret(item, try reader.secret())
        case 12:
            var changes: [VaultChange] = []
            for _ in 0..<(try reader.count(minimumElementSize: 35)) { changes.append(try reader.change()) }
            response = .changes(changes)
        case let tag: throw MalformedMessage(reason: "unknown response \(tag)")
        }
        try reader.expectEnd()
        return response
    }
}

extension WireReader {
    package mutating func item() throws(MalformedMessage) -> VaultItem {
        let service = try string(), account = try string()
        let label = try optionalString(), generic = try optionalData()
        return VaultItem(service: service, account: account, label: label, generic: generic, created: try date(), modified: try date())
    }

    /// One kept version: its number, its item, then who wrote it and how, when it was
    /// archived (absent for the current item), and its secret's size.
    package mutating func version() throws(MalformedMessage) -> VaultItemVersion {
        let number = try u64(), item = try item(), writer = try string(), madeBy = try operation()
        let archived: Date? = try flag() ? try date() : nil
        let archivedBy = try optionalString()
        let archivedBecause: VaultChange.Operation? = try flag() ? try operation() : nil
        guard let secretSize = Int(exactly: try u64()) else { throw MalformedMessage(reason: "a secret size out of range") }
        return VaultItemVersion(
            number: number, item: item, writer: writer, operation: madeBy, archived: archived,
            archivedBy: archivedBy, archivedBecause: archivedBecause, secretSize: secretSize
        )
    }

    package mutating func change() throws(MalformedMessage) -> VaultChange {
        let date = try date(), writer = try string(), madeBy = try operation()
        return VaultChange(date: date, writer: writer, operation: madeBy, service: try string(), account: try string(), version: try u64())
    }

    /// An operation by its name (`VaultChange.Operation`'s raw value): a new one is a
    /// new name, never a renumbering.
    private mutating func operation() throws(MalformedMessage) -> VaultChange.Operation {
        guard let operation = VaultChange.Operation(rawValue: try string()) else { throw MalformedMessage(reason: "unknown operation") }
        return operation
    }
}
