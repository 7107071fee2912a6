// Why this file exists: the Benchmarks package measures the async twins' hand-off with
// no vault work in it (the floor an async `get` cannot go below), through the very path
// the twins take. Visible only to `@_spi(Benchmarking) import VaultKit`; no API promise.

@_spi(Benchmarking)
extension Vault {
    /// One async twin's round trip to this vault's queue and back, running nothing there.
    public func benchmarkEmptyHop() async {
        _ = try? await offPool { () throws(VaultError) in 0 }
    }

    /// Whether the caller runs on this vault's queue (``Vault/executor``): a benchmark of
    /// the inline path checks that it measures what it names.
    public var benchmarkIsOnExecutor: Bool { executor.isCurrent }
}
