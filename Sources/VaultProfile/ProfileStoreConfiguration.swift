/// How a ``ProfileStore`` versions, debounces and finally writes its snapshots.
public struct ProfileStoreConfiguration: Sendable {
    /// The version of your profile type's schema. Increase it whenever a stored snapshot
    /// may no longer decode as the new type; snapshots written with another version go
    /// to the store's migration hook instead of being decoded.
    public var schemaVersion: Int

    /// How long after the first unsaved change the snapshot is written. Every change in
    /// that window rides along in the same write, and a crash (even `kill -9`) loses
    /// at most this window's changes. A burst of updates costs one write.
    public var debounce: Duration

    /// How long the final write on graceful shutdown may take before the store gives up
    /// and ``ProfileStore/shutdown()`` throws ``ProfileStoreError/shutdownDeadlineExceeded``.
    /// A write normally takes well under a millisecond; the deadline matters when another
    /// process holds the vault's write lock.
    public var shutdownDeadline: Duration

    /// For example, `ProfileStoreConfiguration(schemaVersion: 2, debounce: .milliseconds(250))`.
    public init(schemaVersion: Int = 1, debounce: Duration = .seconds(1), shutdownDeadline: Duration = .seconds(5)) {
        self.schemaVersion = schemaVersion
        self.debounce = debounce
        self.shutdownDeadline = shutdownDeadline
    }
}
