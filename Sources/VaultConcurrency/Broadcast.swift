import Synchronization

/// Hands every published element to every subscriber's `AsyncStream`, behind one lock:
/// publishing and subscribing are safe from any thread, every subscriber sees the elements
/// in the order they were published, and a subscriber that stops iterating is dropped at
/// once (no task is started to forget it).
///
/// Made with ``init(latest:bufferingPolicy:)`` it also keeps the latest element: readable
/// synchronously, and the first element of each new stream, so a subscriber sees the value
/// it joined at and then every later one, with no gap and no repeat. Made with
/// ``init(bufferingPolicy:)`` it keeps nothing: a subscriber sees what comes after it joined.
///
/// Shared by VaultProfile (the current profile) and VaultAuth (states and events), so the
/// two libraries fan out values the same way.
package final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var latest: Element?
        var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Mutex<State>
    private let keepsLatest: Bool
    private let bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy

    /// A broadcast that keeps nothing: each stream gets the elements published after it was made.
    ///
    /// - Parameter bufferingPolicy: what each subscriber's stream keeps while its consumer
    ///   is busy; `.unbounded` never drops one, `.bufferingNewest(n)` bounds the memory a
    ///   slow consumer can cost.
    package init(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded) {
        state = Mutex(State(latest: nil))
        keepsLatest = false
        self.bufferingPolicy = bufferingPolicy
    }

    /// A broadcast that keeps the latest element, `initial` until the first ``publish(_:)``;
    /// each stream starts with it.
    package init(latest initial: Element, bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded) {
        state = Mutex(State(latest: initial))
        keepsLatest = true
        self.bufferingPolicy = bufferingPolicy
    }

    /// The latest element; always `nil` for a broadcast made without one.
    package var latest: Element? {
        state.withLock { $0.latest }
    }

    /// Hands `element` to every subscriber (and keeps it as the latest, if this broadcast
    /// keeps one). Yielding only appends to each subscriber's buffer, so holding the lock
    /// meanwhile is cheap, and it is what keeps two concurrent publishers from reaching
    /// subscribers in different orders.
    package func publish(_ element: Element) {
        state.withLock { state in
            if keepsLatest { state.latest = element }
            for continuation in state.subscribers.values { continuation.yield(element) }
        }
    }

    /// A new stream of the elements published from now on, starting with the latest one if
    /// this broadcast keeps one. It ends when the consumer stops iterating or at ``finish()``.
    package func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id: UInt64? = state.withLock { state in
            if let latest = state.latest { continuation.yield(latest) }
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

    /// Ends every stream; later subscribers get the latest element (if kept) and an immediate end.
    package func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return state.subscribers
        }
        for continuation in subscribers.values { continuation.finish() }
    }
}
