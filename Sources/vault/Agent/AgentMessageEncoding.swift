import Foundation
import VaultKit

// Encoding lives apart from the message types and their decoders, which the libFuzzer
// target (Fuzz/FuzzAgentMessage) compiles on their own, without the CLI's buffers.

extension AgentRequest {
    func encode() -> SecretBytes {
        let writer = WireWriter()
        writer.u8(AgentProtocol.version)
        writer.u8(opcode)
        if let target {
            writer.u64(target.device)
            writer.u64(target.inode)
            writer.string(target.path)
        }
        switch self {
        case .status, .stop, .holds, .verify:
            break
        case .unlock(let path, let credential, let isKey, let idleTimeoutSeconds):
            writer.string(path)
            writer.u8(isKey ? 1 : 0)
            writer.secret(credential)
            writer.u64(idleTimeoutSeconds)
        case .lock(let path):
            writer.optionalString(path)
        case .contains(_, let service, let account), .secret(_, let service, let account), .item(_, let service, let account),
             .delete(_, let service, let account):
            writer.string(service)
            writer.string(account)
        case .write(_, let mode, let secret, let service, let account, let label, let generic):
            writer.u8(mode.rawValue)
            writer.string(service)
            writer.string(account)
            writer.optionalString(label)
            writer.optionalData(generic)
            writer.secret(secret)
        case .deleteAll(_, let service):
            writer.string(service)
        case .items(_, let service):
            writer.optionalString(service)
        }
        return writer.buffer
    }
}

extension AgentResponse {
    func encode() -> SecretBytes {
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
        case .failure(let error): WireVaultError.encode(error, to: writer)
        case .refused(let reason): writer.string(reason)
        }
        return writer.buffer
    }
}

extension WireVaultError {
    static func encode(_ error: VaultError, to writer: WireWriter) {
        switch error {
        case .wrongPassphrase: writer.u8(0)
        case .itemNotFound: writer.u8(1)
        case .duplicateItem: writer.u8(2)
        case .vaultNotFound(let path): writer.u8(3); writer.string(path)
        case .vaultAlreadyExists(let path): writer.u8(4); writer.string(path)
        case .notAVault(let path): writer.u8(5); writer.string(path)
        case .unsupportedFormatVersion(let version): writer.u8(6); writer.u64(UInt64(bitPattern: Int64(version)))
        case .formatUpgradeRequired(let version): writer.u8(7); writer.u64(UInt64(bitPattern: Int64(version)))
        case .corrupted(let reason): writer.u8(8); writer.string(reason)
        case .tampered(let reason): writer.u8(9); writer.string(reason)
        case .io(let path, let code): writer.u8(10); writer.string(path); writer.u32(UInt32(bitPattern: code))
        case .invalidArgument(let reason): writer.u8(11); writer.string(reason)
        case .busy(let path): writer.u8(12); writer.string(path)
        case .insecurePermissions(let path, let mode): writer.u8(13); writer.string(path); writer.u32(mode)
        case .untrustedOwner(let path, let uid): writer.u8(14); writer.string(path); writer.u32(uid)
        case .symbolicLink(let path): writer.u8(15); writer.string(path)
        case .keyChanged: writer.u8(16)
        case .closed: writer.u8(17)
        case .secretNotUTF8: writer.u8(18)
        case .cryptoUnavailable: writer.u8(19)
        case .keyDerivationFailed: writer.u8(20)
        case .rolledBack(let path, let seen, let found): writer.u8(21); writer.string(path); writer.u64(seen); writer.u64(found)
        case .batchEnded: writer.u8(22)
        case .reentrantCall: writer.u8(23)
        case .valueNotEncodable: writer.u8(24)
        case .valueNotDecodable: writer.u8(25)
        case .unsupportedValueEncoding(let version): writer.u8(26); writer.u64(UInt64(bitPattern: Int64(version)))
        }
    }
}

extension WireWriter {
    func item(_ item: VaultItem) {
        string(item.service)
        string(item.account)
        optionalString(item.label)
        optionalData(item.generic)
        date(item.created)
        date(item.modified)
    }
}
