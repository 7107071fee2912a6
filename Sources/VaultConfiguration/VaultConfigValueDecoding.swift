import Configuration
import Foundation
import VaultKit

/// How an item's secret is read as each configuration type: the same text encodings
/// swift-configuration's `EnvironmentVariablesProvider` uses, except that `bytes` are
/// the secret's raw bytes (a vault holds binary secrets as they are).
///
/// - string: the secret as UTF-8 text.
/// - int, double: decimal text (`42`, `3.14`).
/// - bool: `true`/`false`, `yes`/`no` or `1`/`0`, in any case.
/// - bytes: the secret's bytes, unchanged.
/// - arrays: comma-separated text, each element trimmed of surrounding whitespace;
///   `byteChunkArray` elements are base64.
enum VaultConfigValueDecoding {
    static func content(of secret: SecretBytes, type: ConfigType, key: String) throws(VaultConfigError) -> ConfigContent {
        let mismatch = VaultConfigError.valueNotConvertible(key: key, type: type)
        if type == .bytes { return .bytes(secret.withUnsafeBytes { Array($0) }) }
        guard let text = secret.string() else { throw mismatch }
        func elements() -> [String] {
            text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        func each<Element>(_ parse: (String) -> Element?) throws(VaultConfigError) -> [Element] {
            var result: [Element] = []
            for element in elements() {
                guard let value = parse(element) else { throw mismatch }
                result.append(value)
            }
            return result
        }
        switch type {
        case .string: return .string(text)
        case .int: guard let value = Int(text) else { throw mismatch }; return .int(value)
        case .double: guard let value = Double(text) else { throw mismatch }; return .double(value)
        case .bool: guard let value = bool(text) else { throw mismatch }; return .bool(value)
        case .bytes: throw mismatch  // handled above
        case .stringArray: return .stringArray(elements())
        case .intArray: return .intArray(try each { Int($0) })
        case .doubleArray: return .doubleArray(try each { Double($0) })
        case .boolArray: return .boolArray(try each(bool))
        case .byteChunkArray: return .byteChunkArray(try each { Data(base64Encoded: $0).map { Array($0) } })
        }
    }

    private static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }
}
