import VaultKit

/// Every ``VaultError`` case on the wire, so the client reports an error from the
/// agent with the same message and exit status as one of its own.
enum WireVaultError {
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
        case 21: return .rolledBack(path: try reader.string(), seenGeneration: try reader.u64(), fileGeneration: try reader.u64())
        case 22: return .batchEnded
        case 23: return .reentrantCall
        case 24: return .valueNotEncodable
        case 25: return .valueNotDecodable
        case 26: return .unsupportedValueEncoding(version: Int(Int64(bitPattern: try reader.u64())))
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
        case .rolledBack(let path, let seen, let found): return .rolledBack(path: respell(path), seenGeneration: seen, fileGeneration: found)
        default: return error
        }
    }
}
