import Synchronization

/// The current value plus its subscribers, behind one lock: readable synchronously from
/// any thread, and every subscriber sees the value it joined at and then every later
/// value, in order, with no gap and no repeat.
final class ProfileBroadcast<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Mutex<State>

    init(_ initial: Value) {
        state = Mutex(State(value: initial))
    }

    var value: Value {
        state.withLock { $0.value }
    }

    /// Replaces the value and hands it to every subscriber. Yielding only appends to each
    /// subscriber's buffer, so holding the lock meanwhile is cheap, and it is what keeps
    /// two concurrent publishers from reaching subscribers in different orders.
    func publish(_ value: Value) {
        state.withLock { state in
            state.value = value
            for continuation in state.subscribers.values { continuation.yield(value) }
        }
    }

    /// A stream that starts with the current value. Unbounded: a subscriber that falls
    /// behind buffers changes rather than missing one.
    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        let id: UInt64? = state.withLock { state in
            continuation.yield(state.value)
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every stream; later subscribers get the last value and an immediate end.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return state.subscribers
        }
        for continuation in subscribers.values { continuation.finish() }
    }
}
