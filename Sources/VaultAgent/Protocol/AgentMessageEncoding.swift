#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

// Encoding lives apart from the message types and their decoders, which the libFuzzer
// target (Fuzz/FuzzAgentMessage) compiles on their own, without the writer.

extension AgentRequest {
    package func encode() -> SecretBytes {
        let writer = WireWriter()
        writer.u8(AgentProtocol.version)
        writer.u8(opcode)
        if let target {
            writer.u64(target.device)
            writer.u64(target.inode)
            writer.string(target.path)
        }
        switch self {
        case .status, .stop, .holds, .verify, .retention:
            break
        case .unlock(let path, let credential, let isKey, let idleTimeoutSeconds):
            writer.string(path)
            writer.u8(isKey ? 1 : 0)
            writer.secret(credential)
            writer.u64(idleTimeoutSeconds)
        case .lock(let path):
            writer.optionalString(path)
        case .contains(_, let service, let account), .secret(_, let service, let account), .item(_, let service, let account),
             .history(_, let service, let account):
            writer.string(service)
            writer.string(account)
        case .delete(_, let keepHistory, let name, let service, let account):
            writer.u8(keepHistory ? 1 : 0)
            writer.optionalString(name)
            writer.string(service)
            writer.string(account)
        case .version(_, let service, let account, let number):
            writer.string(service)
            writer.string(account)
            writer.u64(number)
        case .restore(_, let name, let service, let account, let number):
            writer.optionalString(name)
            writer.string(service)
            writer.string(account)
            writer.u64(number)
        case .purgeHistory(_, let service, let account):
            writer.optionalString(service)
            writer.optionalString(account)
        case .changes(_, let limit):
            writer.u8(limit == nil ? 0 : 1)
            if let limit { writer.u64(limit) }
        case .setRetention(_, let versions):
            writer.u64(versions)
        case .write(_, let mode, let keepHistory, let name, let secret, let service, let account, let label, let generic):
            writer.u8(mode.rawValue)
            writer.u8(keepHistory ? 1 : 0)
            writer.optionalString(name)
            writer.string(service)
            writer.string(account)
            writer.optionalString(label)
            writer.optionalData(generic)
            writer.secret(secret)
        case .deleteAll(_, let keepHistory, let name, let service):
            writer.u8(keepHistory ? 1 : 0)
            writer.optionalString(name)
            writer.string(service)
        case .items(_, let service):
            writer.optionalString(service)
        }
        return writer.buffer
    }
}

extension AgentResponse {
    package func encode() -> SecretBytes {
        let writer = WireWriter()
        writer.u8(AgentProtocol.version)
        writer.u8(tag)
        switch self {
        case .ok, .notHeld: break
        case .bool(let value): writer.u8(value ? 1 : 0)
        case .count(let value): writer.u64(value)
        case .secret(let secret): writer.secret(secret)
        case .item(let item): writer.item(item)
        case .items(let items):
            writer.u32(UInt32(items.count))
            items.forEach(writer.item)
        case .status(let pid, let vaults):
            writer.u32(UInt32(bitPattern: pid))
            writer.u32(UInt32(vaults.count))
            for vault in vaults {
                writer.string(vault.path)
                writer.u64(vault.idleTimeoutSeconds)
                writer.u64(vault.secondsUntilLocked)
            }
        case .versions(let versions):
            writer.u32(UInt32(versions.count))
            versions.forEach(writer.version)
        case .itemWithSecret(let item, let secret):
            writer.item(item)
            writer.secret(secret)
        case .changes(let changes):
            writer.u32(UInt32(changes.count))
            changes.forEach(writer.change)
        case .failure(let error): WireVaultError.encode(error, to: writer)
        case .refused(let reason): writer.string(reason)
        }
        return writer.buffer
    }
}

extension WireVaultError {
    package static func encode(_ error: VaultError, to writer: WireWriter) {
        writer.u8(error.code.rawValue)
        if let reason = error.reason {
            writer.u32(UInt32(reason.rawValue))
            writer.u64(UInt64(bitPattern: reasonDetail(of: error)))
            return
        }
        if let path = error.path { writer.string(path) }
        switch error.code {
        case .unsupportedFormatVersion, .formatUpgradeRequired, .unsupportedValueEncoding:
            writer.u64(UInt64(bitPattern: Int64(error.formatVersion ?? 0)))
        case .io: writer.u32(UInt32(bitPattern: error.errno ?? 0))
        case .insecurePermissions: writer.u32(error.mode ?? 0)
        case .untrustedOwner: writer.u32(error.uid ?? 0)
        case .rolledBack: writer.u64(error.seenGeneration ?? 0); writer.u64(error.fileGeneration ?? 0)
        default: break
        }
    }
}

extension WireWriter {
    package func item(_ item: VaultItem) {
        string(item.service)
        string(item.account)
        optionalString(item.label)
        optionalData(item.generic)
        date(item.created)
        date(item.modified)
    }

    package func version(_ version: VaultItemVersion) {
        u64(version.number)
        item(version.item)
        string(version.writer)
        string(version.operation.rawValue)
        u8(version.archived == nil ? 0 : 1)
        if let archived = version.archived { date(archived) }
        optionalString(version.archivedBy)
        u8(version.archivedBecause == nil ? 0 : 1)
        if let because = version.archivedBecause { string(because.rawValue) }
        u64(UInt64(version.secretSize))
    }

    package func change(_ change: VaultChange) {
        date(change.date)
        string(change.writer)
        string(change.operation.rawValue)
        string(change.service)
        string(change.account)
        u64(change.version)
    }
}
