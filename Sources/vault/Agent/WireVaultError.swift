import VaultKit

/// Every ``VaultError`` case on the wire, so the client reports an error from the
/// agent with the same message and exit status as one of its own.
enum WireVaultError {
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
        }
    }

    static func decode(_ reader: inout WireReader) throws(MalformedMessage) -> VaultError {
        switch try reader.u8() {
        case 0: return .wrongPassphrase
        case 1: return .itemNotFound
        case 2: return .duplicateItem
        case 3: return .vaultNotFound(path: try reader.string())
        case 4: return .vaultAlreadyExists(path: try reader.string())
        case 5: return .notAVault(path: try reader.string())
        case 6: return .unsupportedFormatVersion(Int(Int64(bitPattern: try reader.u64())))
        case 7: return .formatUpgradeRequired(version: Int(Int64(bitPattern: try reader.u64())))
        case 8: return .corrupted(reason: try reader.string())
        case 9: return .tampered(reason: try reader.string())
        case 10: return .io(path: try reader.string(), errno: Int32(bitPattern: try reader.u32()))
        case 11: return .invalidArgument(try reader.string())
        case 12: return .busy(path: try reader.string())
        case 13: return .insecurePermissions(path: try reader.string(), mode: try reader.u32())
        case 14: return .untrustedOwner(path: try reader.string(), uid: try reader.u32())
        case 15: return .symbolicLink(path: try reader.string())
        case 16: return .keyChanged
        case 17: return .closed
        case 18: return .secretNotUTF8
        case 19: return .cryptoUnavailable
        case 20: return .keyDerivationFailed
        case let tag: throw MalformedMessage(reason: "unknown vault error \(tag)")
        }
    }

    /// The error as the client would have seen it: paths under the agent's spelling of
    /// the vault's path are given the client's spelling.
    static func respelled(_ error: VaultError, from agentPath: String, to clientPath: String) -> VaultError {
        func respell(_ path: String) -> String {
            path.hasPrefix(agentPath) ? clientPath + path.dropFirst(agentPath.count) : path
        }
        switch error {
        case .vaultNotFound(let path): return .vaultNotFound(path: respell(path))
        case .vaultAlreadyExists(let path): return .vaultAlreadyExists(path: respell(path))
        case .notAVault(let path): return .notAVault(path: respell(path))
        case .io(let path, let code): return .io(path: respell(path), errno: code)
        case .busy(let path): return .busy(path: respell(path))
        case .insecurePermissions(let path, let mode): return .insecurePermissions(path: respell(path), mode: mode)
        case .untrustedOwner(let path, let uid): return .untrustedOwner(path: respell(path), uid: uid)
        case .symbolicLink(let path): return .symbolicLink(path: respell(path))
        default: return error
        }
    }
}
