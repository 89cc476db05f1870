import Foundation
import GRDB

/// An outbox kept in a store's own SQLite file, beside the data whose changes record events:
/// the store creates the tables in one of its migrations and records events inside the
/// transaction that commits the change (``record(_:in:)``), so both are durable together or
/// not at all.
///
/// Sequences come from `AUTOINCREMENT`, so one is never given twice even after the newest
/// events were removed: a dispatcher's "after this sequence" never skips a new event.
///
/// Delivery's own writes (removing delivered events, counting failures) are committed without
/// waiting for the disk (`synchronous = NORMAL` for that transaction: in WAL mode it cannot
/// corrupt the file, and the store's next durable commit syncs it too): losing one to a power
/// cut only means an event is delivered again, which at-least-once allows, and the store's own
/// commits, which share the file, are not slowed by a sync per delivery.
///
/// Threading: writes go through the store's `DatabaseWriter`, which serializes them with the
/// store's own commits; reads through `reader` (a connection of their own in WAL mode, so they
/// never wait for a commit), or the writer when none is given. The async calls wait for their
/// turn without holding a thread.
public final class SQLiteOutbox: EventOutbox {
    public let source: String
    private let writer: any DatabaseWriter
    private let reader: any DatabaseReader

    /// The outbox in the file `writer` writes, whose tables ``createTables(in:)`` made.
    /// - Parameter reader: a read-only connection to the same file, for the dispatcher's reads.
    public init(source: String, writer: any DatabaseWriter, reader: (any DatabaseReader)? = nil) {
        self.source = source
        self.writer = writer
        self.reader = reader ?? writer
    }

    /// Runs `body` in a transaction committed without a sync (see the type's comment).
    private func unsynced<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.writeWithoutTransaction { db in
            let level = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            defer { try? db.execute(sql: "PRAGMA synchronous = \(level)") }
            var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// Creates the outbox's tables (for a store's migration).
    ///
    /// An event several functions get (the same ID) is kept once, in `outbox_body`, and each
    /// function's place in line is a small row of `outbox_event` pointing at it: ten functions
    /// on one path cost one body per write, not ten. A body goes when no row points at it.
    public static func createTables(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE outbox_body (
                id INTEGER PRIMARY KEY,
                event_id TEXT NOT NULL,
                body BLOB NOT NULL,
                time INTEGER NOT NULL
            );
            CREATE TABLE outbox_event (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                subscriber TEXT NOT NULL,
                body_id INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX outbox_event_by_subscriber ON outbox_event (subscriber, seq);
            CREATE INDEX outbox_event_by_body ON outbox_event (body_id);
            CREATE TABLE outbox_dead_letter (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                subscriber TEXT NOT NULL,
                id TEXT NOT NULL,
                body BLOB NOT NULL,
                time INTEGER NOT NULL,
                attempts INTEGER NOT NULL,
                failed_at INTEGER NOT NULL,
                reason TEXT NOT NULL
            );
            """)
    }

    /// Records `events` inside the caller's transaction (the one committing their change).
    /// Events with the same ID share one stored body (they are one event, for several functions).
    public static func record(_ events: [OutboxEvent], in db: Database) throws {
        guard !events.isEmpty else { return }
        let body = try db.cachedStatement(sql: "INSERT INTO outbox_body (event_id, body, time) VALUES (?, ?, ?)")
        let place = try db.cachedStatement(sql: "INSERT INTO outbox_event (subscriber, body_id) VALUES (?, ?)")
        var stored: [String: Int64] = [:]
        for event in events {
            let bodyID: Int64
            if let known = stored[event.id] {
                bodyID = known
            } else {
                try body.execute(arguments: [event.id, Data(event.body), event.time])
                bodyID = db.lastInsertedRowID
                stored[event.id] = bodyID
            }
            try place.execute(arguments: [event.subscriber, bodyID])
        }
    }

    public func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent] {
        try await reader.read { db in
            try Row.fetchAll(db, sql: """
                SELECT e.seq, b.event_id AS id, b.body, b.time, e.attempts FROM outbox_event e JOIN outbox_body b ON b.id = e.body_id
                WHERE e.subscriber = ? AND e.seq > ? ORDER BY e.seq LIMIT ?
                """, arguments: [subscriber, sequence, limit]).map { row in
                StoredEvent(
                    sequence: row["seq"],
                    event: OutboxEvent(subscriber: subscriber, id: row["id"], body: Array(row["body"] as Data), time: row["time"]),
                    attempts: row["attempts"])
            }
        }
    }

    public func remove(_ sequences: [Int64]) async throws {
        guard !sequences.isEmpty else { return }
        try await unsynced { db in try Self.remove(sequences, in: db) }
    }

    /// Removes events' places in line, and their bodies once no function waits for them.
    private static func remove(_ sequences: [Int64], in db: Database) throws {
        let body = try db.cachedStatement(sql: "SELECT body_id FROM outbox_event WHERE seq = ?")
        let place = try db.cachedStatement(sql: "DELETE FROM outbox_event WHERE seq = ?")
        var bodies: Set<Int64> = []
        for sequence in sequences {
            if let id = try Int64.fetchOne(body, arguments: [sequence]) { bodies.insert(id) }
            try place.execute(arguments: [sequence])
        }
        let orphan = try db.cachedStatement(sql: """
            DELETE FROM outbox_body WHERE id = ? AND NOT EXISTS (SELECT 1 FROM outbox_event WHERE body_id = ?)
            """)
        for id in bodies { try orphan.execute(arguments: [id, id]) }
    }

    public func recordFailure(of sequence: Int64) async throws {
        try await unsynced { db in
            try db.execute(sql: "UPDATE outbox_event SET attempts = attempts + 1 WHERE seq = ?", arguments: [sequence])
        }
    }

    public func deadLetter(_ sequence: Int64, attempts: Int, reason: String, at time: Int64, keeping limit: Int) async throws -> Int {
        try await writer.write { db in
            guard let subscriber = try String.fetchOne(
                db, sql: "SELECT subscriber FROM outbox_event WHERE seq = ?", arguments: [sequence])
            else { return 0 }
            try db.execute(sql: """
                INSERT INTO outbox_dead_letter (subscriber, id, body, time, attempts, failed_at, reason)
                SELECT e.subscriber, b.event_id, b.body, b.time, ?, ?, ?
                FROM outbox_event e JOIN outbox_body b ON b.id = e.body_id WHERE e.seq = ?
                """, arguments: [attempts, time, reason, sequence])
            try Self.remove([sequence], in: db)
            // Every letter of the subscriber's older than its `limit` newest.
            try db.execute(sql: """
                DELETE FROM outbox_dead_letter WHERE subscriber = ? AND seq <= (
                    SELECT seq FROM outbox_dead_letter WHERE subscriber = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                """, arguments: [subscriber, subscriber, max(0, limit)])
            return db.changesCount
        }
    }

    public func deadLetters(for subscriber: String?, limit: Int) async throws -> [DeadLetter] {
        try await reader.read { db in
            let rows: [Row]
            let columns = "seq, subscriber, id, body, time, attempts, failed_at, reason"
            if let subscriber {
                rows = try Row.fetchAll(
                    db, sql: "SELECT \(columns) FROM outbox_dead_letter WHERE subscriber = ? ORDER BY seq LIMIT ?",
                    arguments: [subscriber, limit])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT \(columns) FROM outbox_dead_letter ORDER BY seq LIMIT ?", arguments: [limit])
            }
            return rows.map { row in
                DeadLetter(
                    sequence: row["seq"],
                    event: OutboxEvent(subscriber: row["subscriber"], id: row["id"], body: Array(row["body"] as Data), time: row["time"]),
                    attempts: row["attempts"], failedAt: row["failed_at"], reason: row["reason"])
            }
        }
    }

    public func replay(deadLetter sequence: Int64) async throws -> StoredEvent? {
        try await writer.write { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT subscriber, id, body, time FROM outbox_dead_letter WHERE seq = ?", arguments: [sequence])
            else { return nil }
            let event = OutboxEvent(subscriber: row["subscriber"], id: row["id"], body: Array(row["body"] as Data), time: row["time"])
            try Self.record([event], in: db)
            let replayed = db.lastInsertedRowID
            try db.execute(sql: "DELETE FROM outbox_dead_letter WHERE seq = ?", arguments: [sequence])
            return StoredEvent(sequence: replayed, event: event, attempts: 0)
        }
    }

    public func discard(deadLetter sequence: Int64) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM outbox_dead_letter WHERE seq = ?", arguments: [sequence])
            return db.changesCount > 0
        }
    }

    public func waiting(for subscriber: String) async throws -> Int {
        try await reader.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox_event WHERE subscriber = ?", arguments: [subscriber]) ?? 0
        }
    }

    public func backlog() async throws -> [String: Int] {
        try await reader.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT subscriber, count(*) FROM outbox_event GROUP BY subscriber").map { ($0[0] as String, $0[1] as Int) },
                uniquingKeysWith: +)
        }
    }
}
