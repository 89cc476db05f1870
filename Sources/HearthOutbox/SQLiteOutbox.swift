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
/// Threading: every call goes through the store's `DatabaseWriter`, which serializes it with
/// the store's own commits; the async calls wait for their turn without holding a thread.
public final class SQLiteOutbox: EventOutbox {
    public let source: String
    private let writer: any DatabaseWriter

    /// The outbox in the file `writer` writes, whose tables ``createTables(in:)`` made.
    public init(source: String, writer: any DatabaseWriter) {
        self.source = source
        self.writer = writer
    }

    /// Creates the outbox's tables (for a store's migration).
    public static func createTables(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE outbox_event (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                subscriber TEXT NOT NULL,
                id TEXT NOT NULL,
                body BLOB NOT NULL,
                time INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX outbox_event_by_subscriber ON outbox_event (subscriber, seq);
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
    public static func record(_ events: [OutboxEvent], in db: Database) throws {
        guard !events.isEmpty else { return }
        let statement = try db.cachedStatement(sql: "INSERT INTO outbox_event (subscriber, id, body, time) VALUES (?, ?, ?, ?)")
        for event in events {
            try statement.execute(arguments: [event.subscriber, event.id, Data(event.body), event.time])
        }
    }

    public func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT seq, id, body, time, attempts FROM outbox_event
                WHERE subscriber = ? AND seq > ? ORDER BY seq LIMIT ?
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
        try await writer.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM outbox_event WHERE seq = ?")
            for sequence in sequences { try statement.execute(arguments: [sequence]) }
        }
    }

    public func recordFailure(of sequence: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE outbox_event SET attempts = attempts + 1 WHERE seq = ?", arguments: [sequence])
        }
    }

    public func deadLetter(_ sequence: Int64, reason: String, at time: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO outbox_dead_letter (subscriber, id, body, time, attempts, failed_at, reason)
                SELECT subscriber, id, body, time, attempts, ?, ? FROM outbox_event WHERE seq = ?
                """, arguments: [time, reason, sequence])
            try db.execute(sql: "DELETE FROM outbox_event WHERE seq = ?", arguments: [sequence])
        }
    }

    public func deadLetters(for subscriber: String?, limit: Int) async throws -> [DeadLetter] {
        try await writer.read { db in
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
            try db.execute(sql: "DELETE FROM outbox_dead_letter WHERE seq = ?", arguments: [sequence])
            return StoredEvent(sequence: db.lastInsertedRowID, event: event, attempts: 0)
        }
    }

    public func discard(deadLetter sequence: Int64) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM outbox_dead_letter WHERE seq = ?", arguments: [sequence])
            return db.changesCount > 0
        }
    }

    public func backlog() async throws -> [String: Int] {
        try await writer.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT subscriber, count(*) FROM outbox_event GROUP BY subscriber").map { ($0[0] as String, $0[1] as Int) },
                uniquingKeysWith: +)
        }
    }
}
