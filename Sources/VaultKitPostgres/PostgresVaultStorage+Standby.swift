import VaultKit

/// Lone reads answered by a hot standby (``PostgresStandby``).
///
/// Why it is safe: the standby's answer is used only when it shows the vault state this
/// storage holds and the row version kept under it, exactly what a lone read on the
/// primary must show to be trusted, and only within the staleness bound of the primary
/// last showing that state. It changes nothing the engine relies on (the version, the
/// rows kept, the rollback guard's states), so a standby that lags, runs ahead, is
/// rolled back or lies can only send the read to the primary.
extension PostgresVaultStorage {
    /// The answer to a lone read of `lookupID` from the standby (`.some(nil)`: no row),
    /// or `nil` when the standby cannot give one: then the primary answers.
    func standbyAnswer<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result?? {
        guard let standby, !transaction.inTransaction, snapshotVersion == rowVersions.version else { return nil }
        let now = ContinuousClock.now
        guard standby.withinBound(at: now) else {
            standby.statistics.count(.pastBound)
            return nil
        }
        guard let session = standby.session(at: now, lockTimeoutMilliseconds: lockTimeoutMilliseconds) else {
            standby.statistics.count(.unavailable)
            return nil
        }
        let answer: Swift.Result<Result?, BodyError>?
        do {
            answer = try session.query(loneReadStatement, [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count == 1 else { return nil }
                let xmin = rows.isNull(0, 0) ? nil : PostgresRowVersions.xid(rows.text(0, 3))
                guard rowVersions.holds(Self.vaultState(rows, header: 4), lookupID: lookupID, xmin: xmin) else { return nil }
                guard !rows.isNull(0, 0) else { return .success(nil) }
                return Swift.Result { () throws(BodyError) in try body(rows.bytes(0, 0), rows.bytes(0, 1), rows.bytes(0, 2)) }.map(Optional.some)
            }
        } catch {
            standby.failed(error, at: .now)
            standby.statistics.count(.unavailable)
            return nil
        }
        guard let answer else {
            standby.statistics.count(.notCaughtUp)
            return nil
        }
        standby.statistics.count(.answered)
        return .some(try StorageFailure.passing { () throws(BodyError) in try answer.get() })
    }
}
