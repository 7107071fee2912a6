public import ServiceLifecycle

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension VaultConfigProvider: Service {
    /// Polls the vault's change token every ``pollInterval`` and reloads on a change,
    /// until graceful shutdown or cancellation. A failed check (the vault busy, say) is
    /// logged and retried at the next interval; the last values stay in use.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: self.pollInterval)
                } catch {
                    return  // cancelled
                }
                do {
                    try await self.reloadIfChanged()
                } catch {
                    self.logger.warning("vault config reload failed", metadata: ["service": "\(self.service)", "error": "\(error)"])
                }
            }
        }
    }
}
