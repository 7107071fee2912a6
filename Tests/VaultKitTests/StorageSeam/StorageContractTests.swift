import Foundation
import Testing
import TestTraits
import StorageConformance
import TestSupport
@testable import VaultKit

/// Each guarantee of ``VaultStorage``'s contract, checked on the storage itself, on every
/// storage with connections (PostgreSQL runs them in `PostgresConformanceTests`).
@Suite(.offCooperativePool) struct StorageContractTests {
    @Test(arguments: ContractBackend.allCases, StorageContract.Check.allCases)
    func contract(_ backend: ContractBackend, _ check: StorageContract.Check) throws {
        try check.run(backend.makeStorage("\(check)"))
    }
}

/// The contract's checks can fail: each guarantee has a storage that breaks it, and the
/// check for that guarantee fails on it (while the same check passes on the good storage
/// it wraps, in ``StorageContractTests``).
@Suite(.offCooperativePool) struct StorageContractCatchesBrokenStoragesTests {
    /// Which check catches which defect.
    static let catches: [(BrokenStorage.Defect, StorageContract.Check)] = [
        (.scansInStorageOrder, .scansVisitRowsInLookupIDOrder),
        (.versionNeverMoves, .snapshotVersionMovesOnEveryCommitAndOnlyThen),
        (.noTransactions, .theWriteLockIsExclusive),
        (.noTransactions, .otherConnectionsSeeOnlyCommittedWrites),
        (.readsMissOwnWrites, .aWriteTransactionReadsItsOwnWrites),
        (.commitsOnThrow, .aThrowingBodyRollsEverythingBack),
        (.insertReplaces, .rowsAreUniqueByLookupID),
        (.storesEmptyBuckets, .anEmptyBucketIsStoredAsNone),
    ]

    @Test(arguments: catches)
    func theCheckFailsOnTheStorageThatBreaksIt(_ defect: BrokenStorage.Defect, _ check: StorageContract.Check) throws {
        let good = try ContractBackend.keyValue.makeStorage("\(check)-\(defect)")
        let broken = StorageContract.Fixture { BrokenStorage(try good.connect(), defect: defect) }
        #expect(throws: ConformanceFailure.self) { try check.run(broken) }
    }

    @Test func everyCheckCatchesABrokenStorageAndEveryDefectIsCaught() {
        #expect(Set(Self.catches.map(\.1)) == Set(StorageContract.Check.allCases))
        #expect(Set(Self.catches.map { "\($0.0)" }) == Set(BrokenStorage.Defect.allCases.map { "\($0)" }))
    }
}
