import NIOCore
import Synchronization
import Testing

@testable import HearthEngine
@testable import HearthServer

/// The per-stream queue stays bounded: a reader that falls behind is resynchronised instead.
@Suite("Event buffer")
struct EventBufferTests {
    @Test func deliversEventsInOrder() async {
        let buffer = EventBuffer()
        buffer.push(ByteBuffer(string: "one"), sequence: 1)
        buffer.push(ByteBuffer(string: "two"), sequence: 2)
        guard case .events(let events) = await buffer.next() else {
            Issue.record("expected events")
            return
        }
        #expect(events.map(\.sequence) == [1, 2])
        #expect(events.map { String(buffer: $0.bytes) } == ["one", "two"])
    }

    @Test func overflowTurnsIntoOneResync() async {
        let buffer = EventBuffer()
        for sequence in 0..<(EventBuffer.maxEvents + 10) {
            buffer.push(ByteBuffer(string: "event \(sequence)"), sequence: Int64(sequence))
        }
        guard case .resync = await buffer.next() else {
            Issue.record("expected a resync after overflow")
            return
        }
        // Events after the resync are queued again.
        buffer.push(ByteBuffer(string: "after"), sequence: 10_000)
        guard case .events(let events) = await buffer.next() else {
            Issue.record("expected events after the resync")
            return
        }
        #expect(events.map(\.sequence) == [10_000])
    }

    @Test func anOverflowIsReportedOnce() async {
        let reported = Mutex(0)
        let buffer = EventBuffer(maxEvents: 3, onOverflow: { reported.withLock { $0 += 1 } })
        for sequence in 0..<10 { buffer.push(ByteBuffer(string: "event"), sequence: Int64(sequence)) }
        #expect(reported.withLock { $0 } == 1)
        // Unbounded pushes (a reader's own answers) never count.
        let answers = EventBuffer(maxEvents: 1, onOverflow: { reported.withLock { $0 += 1 } })
        for sequence in 0..<5 { answers.push(ByteBuffer(string: "answer"), sequence: 0, bounded: false) }
        #expect(reported.withLock { $0 } == 1)
    }

    @Test func byteLimitAlsoBoundsTheQueue() async {
        let buffer = EventBuffer()
        let large = ByteBuffer(repeating: 0x41, count: EventBuffer.maxBytes / 2 + 1)
        buffer.push(large, sequence: 1)
        buffer.push(large, sequence: 2)
        guard case .resync = await buffer.next() else {
            Issue.record("expected a resync when the bytes exceed the limit")
            return
        }
    }

    @Test func closeEndsTheStreamAfterFinalEvents() async {
        let buffer = EventBuffer()
        buffer.close(with: [ByteBuffer(string: "bye")])
        buffer.push(ByteBuffer(string: "ignored"), sequence: 1)
        guard case .closed(let final) = await buffer.next() else {
            Issue.record("expected closed")
            return
        }
        #expect(final.map { String(buffer: $0) } == ["bye"])
    }

    @Test func waitingReaderWakesForKeepAlive() async {
        let buffer = EventBuffer()
        async let item = buffer.next()
        try? await Task.sleep(for: .milliseconds(50))
        buffer.pokeKeepAlive()
        guard case .keepAlive = await item else {
            Issue.record("expected a keep-alive")
            return
        }
    }
}
