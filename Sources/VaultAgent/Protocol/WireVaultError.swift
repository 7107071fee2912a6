import VaultKit

/// Every ``VaultError`` on the wire, by code and reason number, so the client reports
/// an error from the agent with the same message and exit status as one of its own.
package enum WireVaultError {
    package static func decode(_ reader: inout WireReader) throws(MalformedMessage) -> VaultError {
        let number = try reader.u8()
        guard let code = VaultError.Code(rawValue: number) else { throw MalformedMessage(reason: "unknown vault error \(number)") }
        switch code {
        case .vaultNotFound: return .vaultNotFound(path: try reader.string())
        case .vaultAlreadyExists: return .vaultAlreadyExists(path: try reader.string())
        case .notAVault: return .notAVault(path: try reader.string())
        case .unsupportedFormatVersion: return .unsupportedFormatVersion(Int(Int64(bitPattern: try reader.u64())))
        case .formatUpgradeRequired: return .formatUpgradeRequired(version: Int(Int64(bitPattern: try reader.u64())))
        case .corrupted, .tampered, .invalidArgument: return try reasoned(code, &reader)
        case .io: return .io(path: try reader.string(), errno: Int32(bitPattern: try reader.u32()))
        case .busy: return .busy(path: try reader.string())
        case .rollbackRecordInvalid: return .rollbackRecordInvalid(path: try reader.string())
        case .insecurePermissions: return .insecurePermissions(path: try reader.string(), mode: try reader.u32())
        case .untrustedOwner: return .untrustedOwner(path: try reader.string(), uid: try reader.u32())
        case .symbolicLink: return .symbolicLink(path: try reader.string())
        case .rolledBack: return .rolledBack(path: try reader.string(), seenGeneration: try reader.u64(), fileGeneration: try reader.u64())
        case .unsupportedValueEncoding: return .unsupportedValueEncoding(version: Int(Int64(bitPattern: try reader.u64())))
        case .wrongPassphrase: return .wrongPassphrase
        case .itemNotFound: return .itemNotFound
        case .duplicateItem: return .duplicateItem
        case .keyChanged: return .keyChanged
        case .closed: return .closed
        case .secretNotUTF8: return .secretNotUTF8
        case .cryptoUnavailable: return .cryptoUnavailable
        case .keyDerivationFailed: return .keyDerivationFailed
        case .batchEnded: return .batchEnded
        case .reentrantCall: return .reentrantCall
        case .valueNotEncodable: return .valueNotEncodable
        case .valueNotDecodable: return .valueNotDecodable
        case .cancelled: return .cancelled
        case .versionNotFound: return .versionNotFound
        default: throw MalformedMessage(reason: "unknown vault error \(number)")
        }
    }

    /// A corrupted, tampered or invalid-argument error: its reason number, then its one
    /// typed detail (the key length given; else 0).
    private static func reasoned(_ code: VaultError.Code, _ reader: inout WireReader) throws(MalformedMessage) -> VaultError {
        let number = try reader.u32()
        let detail = Int64(bitPattern: try reader.u64())
        guard number <= UInt16.max, let reason = VaultError.Reason(rawValue: UInt16(number)) else {
            throw MalformedMessage(reason: "unknown vault error reason \(number)")
        }
        if (code, reason) == (.invalidArgument, .keyLength) { return .invalidKeyLength(byteCount: Int(detail)) }
        guard detail == 0 else { throw MalformedMessage(reason: "unexpected vault error detail") }
        switch code {
        case .corrupted: return .corrupted(reason: reason)
        case .tampered: return .tampered(reason: reason)
        default: return .invalidArgument(reason)
        }
    }

    /// The detail ``reasoned(_:_:)`` reads back.
    package static func reasonDetail(of error: VaultError) -> Int64 {
        Int64(error.byteCount ?? 0)
    }

    /// The error as the client would have seen it: paths under the agent's spelling of
    /// the vault's path are given the client's spelling.
    package static func respelled(_ error: VaultError, from agentPath: String, to clientPath: String) -> VaultError {
        func respell(_ path: String) -> String {
            path.hasPrefix(agentPath) ? clientPath + path.dropFirst(agentPath.count) : path
        }
        guard let path = error.path else { return error }
        let spelled = respell(path)
        switch error.code {
        case .vaultNotFound: return .vaultNotFound(path: spelled)
        case .vaultAlreadyExists: return .vaultAlreadyExists(path: spelled)
        case .notAVault: return .notAVault(path: spelled)
        case .io: return .io(path: spelled, errno: error.errno ?? 0)
        case .busy: return .busy(path: spelled)
        case .insecurePermissions: return .insecurePermissions(path: spelled, mode: error.mode ?? 0)
        case .untrustedOwner: return .untrustedOwner(path: spelled, uid: error.uid ?? 0)
        case .symbolicLink: return .symbolicLink(path: spelled)
        case .rolledBack:
            return .rolledBack(path: spelled, seenGeneration: error.seenGeneration ?? 0, fileGeneration: error.fileGeneration ?? 0)
        default: return error
        }
    }
}
