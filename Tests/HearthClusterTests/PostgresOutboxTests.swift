import Foundation
import HearthCluster
import HearthOutbox
import HearthTesting
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL outbox behaves as the SQLite one (SQLiteOutboxTests): an event several
/// functions get is one entry; each function sees only its own events, finished in any order;
/// an entry goes only when every function it was for is done with it; removed functions'
/// events are forgotten; failures count per function; dead letters are kept, bounded, replayed.
/// And what is its own: sources share the tables without seeing each other's events, and
/// sequences given in concurrent transactions become visible in order.
@Suite(.serialized) struct PostgresOutboxTests {
    static func event(_ id: String, for subscriber: String) -> OutboxEvent {
        OutboxEvent(subscriber: subscriber, id: id, body: Array("{\"id\":\"\(id)\"}".utf8), time: 1)
    }

    static func ids(_ outbox: PostgresOutbox, _ subscriber: String) async throws -> [String] {
        try await outbox.pending(for: subscriber, after: 0, limit: 100).map(\.event.id)
    }

    /// Runs `body` with an outbox of the source `database/test` on a new PostgreSQL.
    static func withOutbox(_ body: (PostgresOutbox, PostgresClient) async throws -> Void) async throws {
        try await TestPostgres.withClients(1) { clients in
            try await PostgresOutbox.prepare(on: clients[0], logger: ClusterLogTests.logger)
            client = clients[0]
            defer { client = nil }
            try await body(PostgresOutbox(source: "database/test", client: clients[0], logger: ClusterLogTests.logger), clients[0])
        }
    }

    /// The client the outboxes of ``withOutbox(_:)`` use (one test at a time: the suite is serialized).
    nonisolated(unsafe) static var client: PostgresClient?

    static func record(_ events: [OutboxEvent], in outbox: PostgresOutbox) async throws {
        try await client!.withTransaction(logger: ClusterLogTests.logger) { connection in
            try await PostgresOutbox.record(events, source: outbox.source, on: connection, logger: ClusterLogTests.logger)
        }
    }

    static func entries(_ client: PostgresClient) async throws -> Int64 {
        let rows = try await client.query("SELECT count(*) FROM hearth_outbox_entry", logger: ClusterLogTests.logger)
        var count: Int64 = 0
        for try await (value) in rows.decode(Int64.self) { count = value }
        return count
    }

    @Test func anEventForSeveralFunctionsIsOneEntryAndGoesWhenTheLastIsDone() async throws {
        try await Self.withOutbox { outbox, client in
            try await Self.record([Self.event("e1", for: "a"), Self.event("e1", for: "b"), Self.event("e1", for: "c")], in: outbox)
            try await Self.record([Self.event("e2", for: "b")], in: outbox)
            #expect(try await Self.entries(client) == 2)
            #expect(try await Self.ids(outbox, "a") == ["e1"])
            #expect(try await Self.ids(outbox, "b") == ["e1", "e2"])
            let e1 = try await outbox.pending(for: "a", after: 0, limit: 1)[0].sequence
            try await outbox.remove([e1], for: "a")
            try await outbox.remove([e1], for: "b")
            #expect(try await Self.entries(client) == 2)
            #expect(try await outbox.backlog() == ["b": 1, "c": 1])
            try await outbox.remove([e1], for: "c")
            #expect(try await Self.entries(client) == 1)
            #expect(try await Self.ids(outbox, "b") == ["e2"])
        }
    }

    @Test func eventsFinishedOutOfOrderAreNotGivenAgainAndGoInTurn() async throws {
        try await Self.withOutbox { outbox, client in
            try await Self.record(["e1", "e2", "e3", "e4"].map { Self.event($0, for: "fn") }, in: outbox)
            let page = try await outbox.pending(for: "fn", after: 0, limit: 10)
            try await outbox.remove([page[2].sequence, page[3].sequence], for: "fn")
            #expect(try await Self.ids(outbox, "fn") == ["e1", "e2"])
            #expect(try await outbox.waiting(for: "fn") == 2)
            #expect(try await Self.entries(client) == 4)
            try await outbox.remove([page[0].sequence], for: "fn")
            #expect(try await Self.entries(client) == 3)
            // A dead letter is done too: the cursor passes everything.
            _ = try await outbox.deadLetter(page[1].sequence, for: "fn", attempts: 1, reason: "no", at: 2, keeping: 10)
            #expect(try await Self.ids(outbox, "fn").isEmpty)
            #expect(try await Self.entries(client) == 0)
            #expect(try await outbox.deadLetters(for: "fn", limit: 10).map(\.event.id) == ["e2"])
        }
    }

    @Test func removedFunctionsAreForgottenWithTheirWaitingEvents() async throws {
        try await Self.withOutbox { outbox, client in
            try await Self.record([Self.event("e1", for: "kept"), Self.event("e1", for: "gone")], in: outbox)
            try await Self.record([Self.event("e2", for: "gone")], in: outbox)
            #expect(try await outbox.retain(subscribers: ["kept"]) == ["gone": 2])
            #expect(try await Self.entries(client) == 1)
            #expect(try await outbox.backlog() == ["kept": 1])
            let e1 = try await outbox.pending(for: "kept", after: 0, limit: 1)[0].sequence
            try await outbox.remove([e1], for: "kept")
            #expect(try await Self.entries(client) == 0)
        }
    }

    @Test func failuresAreCountedPerFunction() async throws {
        try await Self.withOutbox { outbox, _ in
            try await Self.record([Self.event("e1", for: "a"), Self.event("e1", for: "b")], in: outbox)
            let e1 = try await outbox.pending(for: "a", after: 0, limit: 1)[0].sequence
            try await outbox.recordFailure(of: e1, for: "a")
            try await outbox.recordFailure(of: e1, for: "a")
            #expect(try await outbox.pending(for: "a", after: 0, limit: 1)[0].attempts == 2)
            #expect(try await outbox.pending(for: "b", after: 0, limit: 1)[0].attempts == 0)
        }
    }

    @Test func deadLettersAreBoundedReplayedAndDiscarded() async throws {
        try await Self.withOutbox { outbox, _ in
            try await Self.record(["e1", "e2", "e3"].map { Self.event($0, for: "fn") }, in: outbox)
            let page = try await outbox.pending(for: "fn", after: 0, limit: 10)
            var dropped = 0
            for event in page {
                dropped += try await outbox.deadLetter(event.sequence, for: "fn", attempts: 3, reason: "HTTP 500", at: 9, keeping: 2)
            }
            #expect(dropped == 1)
            let letters = try await outbox.deadLetters(for: nil, limit: 10)
            #expect(letters.map(\.event.id) == ["e2", "e3"] && letters[0].attempts == 3 && letters[0].reason == "HTTP 500")
            let replayed = try #require(try await outbox.replay(deadLetter: letters[0].sequence))
            #expect(replayed.sequence > page[2].sequence && replayed.event.id == "e2")
            #expect(try await Self.ids(outbox, "fn") == ["e2"])
            #expect(try await outbox.replay(deadLetter: letters[0].sequence) == nil)
            #expect(try await outbox.discard(deadLetter: letters[1].sequence))
            #expect(try await outbox.deadLetters(for: "fn", limit: 10).isEmpty)
        }
    }

    @Test func sourcesShareTheTablesButNotTheirEvents() async throws {
        try await Self.withOutbox { outbox, client in
            let accounts = PostgresOutbox(source: "accounts", client: client, logger: ClusterLogTests.logger)
            try await Self.record([Self.event("d1", for: "fn")], in: outbox)
            try await Self.record([Self.event("a1", for: "fn")], in: accounts)
            #expect(try await Self.ids(outbox, "fn") == ["d1"])
            #expect(try await Self.ids(accounts, "fn") == ["a1"])
            try await accounts.remove([try await accounts.pending(for: "fn", after: 0, limit: 1)[0].sequence], for: "fn")
            #expect(try await outbox.backlog() == ["fn": 1])
            #expect(try await accounts.backlog().isEmpty)
        }
    }

    /// Two transactions recording at once: the second waits for the first's head row, so no
    /// event becomes visible behind one already delivered.
    @Test func concurrentRecordersGetSequencesInCommitOrder() async throws {
        try await Self.withOutbox { outbox, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for item in 0..<10 { try await Self.record([Self.event("w\(writer)-\(item)", for: "fn")], in: outbox) }
                    }
                }
                // Deliver while they record: every event is seen exactly once, in sequence order.
                var seen: [Int64] = []
                let deadline = ContinuousClock.now + .seconds(60)
                while seen.count < 40, ContinuousClock.now < deadline {
                    let page = try await outbox.pending(for: "fn", after: seen.last ?? 0, limit: 7)
                    seen += page.map(\.sequence)
                    try await outbox.remove(page.map(\.sequence), for: "fn")
                    if page.isEmpty { await Task.yield() }
                }
                try await group.waitForAll()
                #expect(seen == Array(1...40))
                #expect(try await outbox.backlog().isEmpty)
            }
        }
    }
}
