import Foundation
import HearthCore
import HearthOutbox
import HearthTesting
@testable import HearthStore
import Testing

/// Events a write records (for functions) are committed with it, in its order, and only when
/// it is accepted; the outbox hands them out in order and keeps what failed for good.
@Suite("Commit events")
struct CommitEventTests {
    /// Records one event per write under `/watched`, naming the write's path and value.
    struct PathRecorder: CommitEventRecorder {
        func events(
            database: String, write: ResolvedWrite, origin: WriteOrigin, before: DatabaseState, after: DatabaseState, time: Int64
        ) -> [OutboxEvent] {
            guard write.path.first?.string == "watched" else { return [] }
            let value = JSONWriter.string(after.value(at: write.path))
            return [OutboxEvent(subscriber: "fn", id: "\(database)\(write.path)", body: Array("\(write.path)=\(value)".utf8), time: time)]
        }
    }

    static func bodies(_ events: [StoredEvent]) -> [String] {
        events.map { String(decoding: $0.event.body, as: UTF8.self) }
    }

    @Test func acceptedWritesRecordTheirEventsInCommitOrderAndRefusedOnesNone() async throws {
        var fixture = try StoreFixture()
        defer { fixture.remove() }
        fixture.options.eventRecorder = PathRecorder()
        let database = try fixture.open()
        let outbox = try #require(database.outbox)
        #expect(outbox.source == "database/test")
        try await database.write(set("/watched/a", "1"))
        try await database.write(set("/elsewhere", "2"))
        await #expect(throws: HearthError.self) {
            try await database.write(set("/watched/b", "3"), precondition: { _ in throw HearthError(.preconditionFailed, "no") })
        }
        // Queued at once, in call order: both events in write order.
        let done = AsyncStream<Void>.makeStream()
        let outcomes = SendableBox<[Bool]>([])
        for (location, value) in [("/watched/c", "4"), ("/watched/a", "5")] {
            database.submit(try set(location, value)) { result in
                outcomes.mutate { $0.append((try? result.get()) != nil) }
                done.continuation.yield()
            }
        }
        var iterator = done.stream.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(outcomes.value == [true, true])
        let pending = try await outbox.pending(for: "fn", after: 0, limit: 10)
        #expect(Self.bodies(pending) == ["/watched/a=1", "/watched/c=4", "/watched/a=5"])
        #expect(pending.map(\.event.time) == [fixture.clock.now, fixture.clock.now, fixture.clock.now])
        #expect(try await outbox.backlog() == ["fn": 3])
        #expect(try await outbox.pending(for: "other", after: 0, limit: 10).isEmpty)
        #expect(try await outbox.pending(for: "fn", after: pending[0].sequence, limit: 1).map(\.sequence) == [pending[1].sequence])
    }

    @Test func eventsOutliveAReopenAndLeaveTheOutboxWhenDeliveredOrGivenUp() async throws {
        var fixture = try StoreFixture()
        defer { fixture.remove() }
        fixture.options.eventRecorder = PathRecorder()
        do {
            let database = try fixture.open()
            for value in 1...4 { try await database.write(set("/watched/n", "\(value)")) }
            database.close()
        }
        let database = try fixture.open()
        let outbox = try #require(database.outbox)
        let pending = try await outbox.pending(for: "fn", after: 0, limit: 10)
        #expect(Self.bodies(pending) == ["/watched/n=1", "/watched/n=2", "/watched/n=3", "/watched/n=4"])
        try await outbox.remove([pending[0].sequence], for: "fn")
        try await outbox.recordFailure(of: pending[1].sequence, for: "fn")
        try await outbox.recordFailure(of: pending[1].sequence, for: "fn")
        // The third failure gives up: the letter counts all three.
        try await outbox.deadLetter(pending[1].sequence, for: "fn", attempts: 3, reason: "HTTP 500", at: 99, keeping: 10)
        let left = try await outbox.pending(for: "fn", after: 0, limit: 10)
        #expect(Self.bodies(left) == ["/watched/n=3", "/watched/n=4"])
        let dead = try await outbox.deadLetters(for: "fn", limit: 10)
        #expect(dead.count == 1 && dead[0].attempts == 3 && dead[0].reason == "HTTP 500" && dead[0].failedAt == 99)
        #expect(dead[0].event == pending[1].event)
        #expect(try await outbox.deadLetters(for: "other", limit: 10).isEmpty)
        // Replayed: back at the end of the queue with its ID, after every event it waited behind.
        let replayed = try #require(try await outbox.replay(deadLetter: dead[0].sequence))
        #expect(replayed.event == pending[1].event && replayed.sequence > pending[3].sequence)
        #expect(try await outbox.replay(deadLetter: dead[0].sequence) == nil)
        #expect(try await outbox.deadLetters(for: nil, limit: 10).isEmpty)
        // Removing the newest event never lets a sequence be given again.
        try await outbox.remove([replayed.sequence], for: "fn")
        try await database.write(set("/watched/n", "5"))
        let newest = try await outbox.pending(for: "fn", after: 0, limit: 10).last
        #expect(newest.map { $0.sequence > replayed.sequence } == true)
        try await outbox.deadLetter(pending[2].sequence, for: "fn", attempts: 1, reason: "gone", at: 1, keeping: 10)
        let discarded = try await outbox.deadLetters(for: nil, limit: 1)[0].sequence
        #expect(try await outbox.discard(deadLetter: discarded))
        #expect(try await outbox.discard(deadLetter: discarded) == false)
        database.close()
    }

    @Test func anImportRecordsTheEventsOfTheWholeReplacement() async throws {
        var fixture = try StoreFixture()
        defer { fixture.remove() }
        fixture.options.eventRecorder = PathRecorder()
        let database = try fixture.open()
        try await database.replace(at: try path("/watched"), with: try node(#"{"x": 1}"#))
        #expect(Self.bodies(try await database.outbox!.pending(for: "fn", after: 0, limit: 10)) == [#"/watched={"x":1}"#])
        database.close()
    }
}
