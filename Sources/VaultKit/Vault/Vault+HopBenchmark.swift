// Why this file exists: the Benchmarks package measures the async twins' hand-off with
// no vault work in it (the floor an async `get` cannot go below), through the very path
// the twins take. Visible only to `@_spi(Benchmarking) import VaultKit`; no API promise.

@_spi(Benchmarking)
extension Vault {
    /// One async twin's round trip to this vault's queue and back, running nothing there.
    public func benchmarkEmptyHop() async {
        _ = try? await offPool { () throws(VaultError) in 0 }
    }
}
