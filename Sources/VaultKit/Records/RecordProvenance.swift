#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a record of version 2 says about the write that made it (docs/FORMAT.md section
/// 14): the item's version number, the writer and the operation; and for a kept version,
/// when, by whom and why it stopped being current.
struct RecordProvenance: Sendable, Hashable {
    /// The item's version number; 0 for a current item not yet numbered (a new item, or
    /// one written before history), which takes the number after its kept versions.
    var number: UInt64
    var writer: String
    var operation: VaultChange.Operation
    /// Set on a kept version (kind `version`), `nil` on the current item.
    var archive: Archive?

    struct Archive: Sendable, Hashable {
        var date: Date
        var writer: String
        var because: VaultChange.Operation
    }

    /// A record of version 1, which says nothing of how it was written.
    static let unrecorded = RecordProvenance(number: 0, writer: "", operation: .set, archive: nil)

    /// The kind byte of the record it is encoded in.
    var kind: RecordKind { archive == nil ? .item : .version }

    /// The number the item's next version takes after this one when it is not kept:
    /// an unnumbered record stays unnumbered.
    var nextNumberWithoutArchive: UInt64 { number == 0 ? 0 : number + 1 }
}

/// The kind byte of a record of version 2: an item, a kept version of one, or the vault's
/// settings. Each kind has its own row ids (section 14), so a record moved to a row of
/// another kind fails the binding check.
enum RecordKind: UInt8, Sendable {
    case item = 1
    case version = 2
    case settings = 3
}

extension VaultChange.Operation {
    /// The byte a record stores for the operation (docs/FORMAT.md section 14).
    var recordCode: UInt8 {
        switch self {
        case .add: 1
        case .set: 2
        case .update: 3
        case .delete: 4
        case .restore: 5
        }
    }

    init?(recordCode: UInt8) {
        switch recordCode {
        case 1: self = .add
        case 2: self = .set
        case 3: self = .update
        case 4: self = .delete
        case 5: self = .restore
        default: return nil
        }
    }
}
