#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// A file format that holds logins to import: VaultKit's own export, or another password
/// manager's. A struct of static members rather than an enum, so a new format is not a
/// breaking change for a client's `switch`.
///
/// Each format reads the whole file from memory and decodes every field that may be a
/// password straight into `SecretBytes`; no secret becomes a `String` or `Data`.
public struct TransferFormat: Hashable, Sendable, CustomStringConvertible {
    /// The format's name, as `vault import --format` takes it.
    public let name: String

    private init(_ name: String) { self.name = name }

    /// VaultKit's own export (``VaultKitJSONFormat``), restored exactly.
    public static let vaultKitJSON = TransferFormat("json")
    /// Bitwarden's unencrypted JSON export: its logins with a password.
    public static let bitwarden = TransferFormat("bitwarden")
    /// KeePassXC's CSV export: its entries with a password.
    public static let keePassXC = TransferFormat("keepassxc")
    /// The password CSV of Chrome and the other Chromium browsers.
    public static let chromeCSV = TransferFormat("chrome")
    /// Firefox's password CSV.
    public static let firefoxCSV = TransferFormat("firefox")

    /// Every format, in the order `vault import --help` lists them.
    public static let all: [TransferFormat] = [.vaultKitJSON, .bitwarden, .keePassXC, .chromeCSV, .firefoxCSV]

    /// The format called `name` (one of ``all``'s names), or `nil`.
    public init?(name: String) {
        guard let format = Self.all.first(where: { $0.name == name }) else { return nil }
        self = format
    }

    public var description: String { name }

    /// The items of a file in this format, and how many entries were passed over (not a
    /// login, or no password). Refuses a file that does not parse, with the place (a
    /// line, an item number) but never a field's text.
    public func read(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> ImportContents {
        switch self {
        case .vaultKitJSON: try VaultKitJSONFormat.parse(bytes)
        case .bitwarden: try BitwardenFormat.parse(bytes)
        case .keePassXC: try KeePassXCFormat.parse(bytes)
        case .chromeCSV: try BrowserCSVFormat.parse(bytes, browser: "Chrome")
        case .firefoxCSV: try BrowserCSVFormat.parse(bytes, browser: "Firefox")
        default: preconditionFailure("TransferFormat \(name) has no reader")
        }
    }

    /// The same read, of a file already in protected memory (as `vault import` reads it).
    public func read(_ contents: SecretBytes) throws(TransferError) -> ImportContents {
        try contents.withUnsafeBytes { (bytes) throws(TransferError) in try read(bytes) }
    }
}
