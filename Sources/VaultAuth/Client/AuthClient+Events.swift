import Foundation

/// What an ``AuthClient`` tells its observers: its state, and what it does.
extension AuthClient {
    /// A stream of states, starting with the current one. Each call makes a new stream;
    /// it ends when the consumer stops iterating.
    public func states() -> AsyncStream<AuthState> {
        stateBroadcast.subscribe()
    }

    /// A stream of what the client does from now on (refreshes, refusals, lease changes), for
    /// metrics. Each call makes a new stream; it keeps the newest 256 events a slow consumer
    /// has not read, and ends when the consumer stops iterating.
    public func events() -> AsyncStream<AuthEvent> {
        eventBroadcast.subscribe()
    }

    /// Makes `newState` current and hands it to the ``states()`` streams, if it changed.
    func publish(_ newState: AuthState) {
        guard newState != state else { return }
        state = newState
        stateBroadcast.publish(newState)
    }

    func emit(_ event: AuthEvent) {
        eventBroadcast.publish(event)
    }
}
