import Foundation
import GRDB
import HearthOutbox
import HearthTesting
import Testing

/// The outbox's layout, one row per event and a cursor per subscriber: an event several
/// functions get is stored once; each function sees only its own events, finished in any
/// order; an entry goes only when every function it was for is done with it; removed
/// functions' events are forgotten; and files made with the first layout keep their events.
struct SQLiteOutboxTests {
    static func event(_ id: String, for subscriber: String) -> OutboxEvent {
        OutboxEvent(subscriber: subscriber, id: id, body: Array("{\"id\":\"\(id)\"}".utf8), time: 1)
    }

    static func ids(_ outbox: SQLiteOutbox, _ subscriber: String) async throws -> [String] {
        try await outbox.pending(for: subscriber, after: 0, limit: 100).map(\.event.id)
    }

    static func entries(_ fixture: OutboxFixture) throws -> Int {
        try fixture.queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox_entry") ?? 0 }
    }

    @Test func eventsAreGroupedByIDInTheOrderOfTheirFirstSubscriber() {
        let grouped = SQLiteOutbox.entries([
            Self.event("a", for: "f1"), Self.event("a", for: "f2"), Self.event("b", for: "f1"), Self.event("c", for: "f2"),
            Self.event("a", for: "f3"),
        ])
        #expect(grouped.map(\.event.id) == ["a", "b", "c"])
        #expect(grouped.map(\.subscribers) == [["f1", "f2", "f3"], ["f1"], ["f2"]])
        // Runs only: one pass.
        let runs = SQLiteOutbox.entries([Self.event("x", for: "f1"), Self.event("x", for: "f2"), Self.event("y", for: "f1")])
        #expect(runs.map(\.event.id) == ["x", "y"] && runs.map(\.subscribers) == [["f1", "f2"], ["f1"]])
        #expect(SQLiteOutbox.entries([]).isEmpty)
    }

    @Test func anEventForSeveralFunctionsIsOneEntryAndGoesWhenTheLastIsDone() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        // A commit whose event three functions get, then one only "b" gets.
        try fixture.record([Self.event("e1", for: "a"), Self.event("e1", for: "b"), Self.event("e1", for: "c")])
        try fixture.record([Self.event("e2", for: "b")])
        #expect(try Self.entries(fixture) == 2)
        #expect(try await Self.ids(fixture.outbox, "a") == ["e1"])
        #expect(try await Self.ids(fixture.outbox, "b") == ["e1", "e2"])
        let e1 = try await fixture.outbox.pending(for: "a", after: 0, limit: 1)[0].sequence
        try await fixture.outbox.remove([e1], for: "a")
        try await fixture.outbox.remove([e1], for: "b")
        #expect(try Self.entries(fixture) == 2)
        #expect(try await fixture.outbox.backlog() == ["b": 1, "c": 1])
        try await fixture.outbox.remove([e1], for: "c")
        #expect(try Self.entries(fixture) == 1)
        #expect(try await Self.ids(fixture.outbox, "b") == ["e2"])
    }

    @Test func eventsFinishedOutOfOrderAreNotGivenAgainAndGoInTurn() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        try fixture.record(ids: ["e1", "e2", "e3", "e4"])
        let page = try await fixture.outbox.pending(for: "fn", after: 0, limit: 10)
        // A concurrent window finished its third and fourth first.
        try await fixture.outbox.remove([page[2].sequence, page[3].sequence], for: "fn")
        #expect(try await Self.ids(fixture.outbox, "fn") == ["e1", "e2"])
        #expect(try await fixture.outbox.waiting(for: "fn") == 2)
        #expect(try Self.entries(fixture) == 4)
        try await fixture.outbox.remove([page[0].sequence], for: "fn")
        #expect(try Self.entries(fixture) == 3)
        // A dead letter is done too: the cursor passes everything.
        _ = try await fixture.outbox.deadLetter(page[1].sequence, for: "fn", attempts: 1, reason: "no", at: 2, keeping: 10)
        #expect(try await Self.ids(fixture.outbox, "fn").isEmpty && (try Self.entries(fixture)) == 0)
        #expect(try await fixture.outbox.deadLetters(for: "fn", limit: 10).map(\.event.id) == ["e2"])
    }

    @Test func aFunctionWithoutEventsHereHoldsNothingBack() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        try fixture.record([Self.event("x1", for: "quiet")])
        try await fixture.outbox.remove([try await fixture.outbox.pending(for: "quiet", after: 0, limit: 1)[0].sequence], for: "quiet")
        // "quiet" stays at its old cursor while "busy" goes on: busy's entries still go.
        try fixture.record(ids: ["e1", "e2"], for: "busy")
        let page = try await fixture.outbox.pending(for: "busy", after: 0, limit: 10)
        try await fixture.outbox.remove(page.map(\.sequence), for: "busy")
        #expect(try Self.entries(fixture) == 0)
    }

    @Test func removedFunctionsAreForgottenWithTheirWaitingEvents() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        try fixture.record([Self.event("e1", for: "kept"), Self.event("e1", for: "gone")])
        try fixture.record([Self.event("e2", for: "gone")])
        #expect(try await fixture.outbox.retain(subscribers: ["kept"]) == ["gone": 2])
        #expect(try Self.entries(fixture) == 1)
        #expect(try await fixture.outbox.backlog() == ["kept": 1])
        let e1 = try await fixture.outbox.pending(for: "kept", after: 0, limit: 1)[0].sequence
        try await fixture.outbox.remove([e1], for: "kept")
        #expect(try Self.entries(fixture) == 0)
    }

    @Test func failuresAreCountedPerFunction() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        try fixture.record([Self.event("e1", for: "a"), Self.event("e1", for: "b")])
        let e1 = try await fixture.outbox.pending(for: "a", after: 0, limit: 1)[0].sequence
        try await fixture.outbox.recordFailure(of: e1, for: "a")
        try await fixture.outbox.recordFailure(of: e1, for: "a")
        #expect(try await fixture.outbox.pending(for: "a", after: 0, limit: 1)[0].attempts == 2)
        #expect(try await fixture.outbox.pending(for: "b", after: 0, limit: 1)[0].attempts == 0)
    }

    @Test func aFileWithTheFirstLayoutKeepsItsEventsAndFailures() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-outbox-upgrade")
        defer { directory.remove() }
        let queue = try DatabaseQueue(path: directory.url.appendingPathComponent("old.sqlite").path)
        try await queue.write { db in
            try SQLiteOutbox.createTables(in: db)
            // What the first layout held: one body for two functions, one failure, one dead letter.
            try db.execute(sql: """
                INSERT INTO outbox_body (id, event_id, body, time) VALUES (1, 'e1', X'7B7D', 5), (2, 'e2', X'7B7D', 6);
                INSERT INTO outbox_event (seq, subscriber, body_id, attempts) VALUES (7, 'a', 1, 0), (8, 'b', 1, 2), (9, 'a', 2, 0);
                INSERT INTO outbox_dead_letter (subscriber, id, body, time, attempts, failed_at, reason)
                    VALUES ('a', 'e0', X'7B7D', 4, 3, 5, 'HTTP 500');
                """)
            try SQLiteOutbox.addCursors(in: db)
        }
        let outbox = SQLiteOutbox(source: "database/test", writer: queue)
        #expect(try await Self.ids(outbox, "a") == ["e1", "e2"])
        let b = try await outbox.pending(for: "b", after: 0, limit: 10)
        #expect(b.map(\.event.id) == ["e1"] && b[0].attempts == 2 && b[0].event.time == 5)
        #expect(try await outbox.deadLetters(for: "a", limit: 10).map(\.event.id) == ["e0"])
        // New sequences come after the old ones.
        try await queue.write { db in try SQLiteOutbox.record([Self.event("e3", for: "a")], in: db) }
        let a = try await outbox.pending(for: "a", after: 0, limit: 10)
        #expect(a.map(\.event.id) == ["e1", "e2", "e3"] && a[2].sequence > a[1].sequence)
    }

    @Test func aCursorMadeInARolledBackTransactionIsMadeAgain() async throws {
        let fixture = try OutboxFixture()
        defer { fixture.remove() }
        let known = OutboxSubscribers()
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try fixture.queue.write { db in
                try SQLiteOutbox.record([Self.event("e1", for: "fn")], in: db, known: known)
                throw Refused()
            }
        }
        try await fixture.queue.write { db in try SQLiteOutbox.record([Self.event("e2", for: "fn")], in: db, known: known) }
        try await fixture.queue.write { db in try SQLiteOutbox.record([Self.event("e3", for: "fn")], in: db, known: known) }
        let cursors = try await fixture.queue.read { db in try String.fetchAll(db, sql: "SELECT subscriber FROM outbox_cursor") }
        #expect(cursors == ["fn"])
        // Its events still go once it is done with them.
        let page = try await fixture.outbox.pending(for: "fn", after: 0, limit: 10)
        #expect(page.map(\.event.id) == ["e2", "e3"])
        try await fixture.outbox.remove(page.map(\.sequence), for: "fn")
        #expect(try Self.entries(fixture) == 0)
    }
}
