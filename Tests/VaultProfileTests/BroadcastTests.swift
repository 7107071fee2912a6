import Testing
import VaultConcurrency

/// The broadcast VaultProfile and VaultAuth share, on its own.
@Suite struct BroadcastTests {
    /// The first `count` elements of `stream`, and whether it ended right after them.
    func take(_ count: Int, from stream: AsyncStream<Int>) async -> (elements: [Int], endsAfter: Bool) {
        var iterator = stream.makeAsyncIterator()
        var elements: [Int] = []
        while elements.count < count, let next = await iterator.next() { elements.append(next) }
        return (elements, await iterator.next() == nil)
    }

    @Test func aBroadcastKeepingTheLatestStartsEachStreamWithIt() async {
        let broadcast = Broadcast(latest: 1)
        broadcast.publish(2)
        let early = broadcast.subscribe()
        broadcast.publish(3)
        let late = broadcast.subscribe()
        broadcast.publish(4)
        #expect(broadcast.latest == 4)
        broadcast.finish()
        #expect(await take(3, from: early) == ([2, 3, 4], true))
        #expect(await take(2, from: late) == ([3, 4], true))
        // After the end: the latest value, then the end at once.
        #expect(await take(1, from: broadcast.subscribe()) == ([4], true))
    }

    @Test func aBroadcastKeepingNothingHandsOutOnlyLaterElements() async {
        let broadcast = Broadcast<Int>()
        broadcast.publish(1)
        let stream = broadcast.subscribe()
        broadcast.publish(2)
        broadcast.publish(3)
        #expect(broadcast.latest == nil)
        broadcast.finish()
        #expect(await take(2, from: stream) == ([2, 3], true))
        #expect(await take(0, from: broadcast.subscribe()) == ([], true))
    }

    @Test func aBoundedStreamKeepsTheNewestForASlowConsumer() async {
        let broadcast = Broadcast<Int>(bufferingPolicy: .bufferingNewest(2))
        let stream = broadcast.subscribe()
        for element in 1...5 { broadcast.publish(element) }
        broadcast.finish()
        #expect(await take(2, from: stream) == ([4, 5], true))
    }
}
