import Foundation
import GRDB

/// An outbox kept in a store's own SQLite file, beside the data whose changes record events:
/// the store creates the tables in its migrations (``createTables(in:)`` then
/// ``addCursors(in:)``) and records events inside the transaction that commits the change
/// (``record(_:in:)``), so both are durable together or not at all.
///
/// **Layout: one row per event, a cursor per subscriber.** An event is one row of
/// `outbox_entry` however many subscribers get it (their names listed in the row), so what
/// recording costs a write does not grow with the number of functions. Each subscriber has a
/// cursor (`outbox_cursor`): every entry at or below it is done for that subscriber. Events
/// finished out of order (a window delivered concurrently, a dead letter) are kept as marks
/// (`outbox_done`) until the cursor passes them; failures are counted per subscriber and event
/// (`outbox_attempt`). An entry goes once every cursor passed it.
///
/// Sequences come from `AUTOINCREMENT`, so one is never given twice even after the newest
/// entries were removed: a dispatcher's "after this sequence" never skips a new event.
///
/// Delivery's own writes (cursors, marks, failure counts) are committed without waiting for the
/// disk (`synchronous = NORMAL` for that transaction: in WAL mode it cannot corrupt the file,
/// and the store's next durable commit syncs it too): losing one to a power cut only means an
/// event is delivered again, which at-least-once allows, and the store's own commits, which
/// share the file, are not slowed by a sync per delivery.
///
/// Threading: writes go through the store's `DatabaseWriter`, which serializes them with the
/// store's own commits; reads through `reader` (a connection of their own in WAL mode, so they
/// never wait for a commit), or the writer when none is given. The async calls wait for their
/// turn without holding a thread.
public final class SQLiteOutbox: EventOutbox {
    public let source: String
    private let writer: any DatabaseWriter
    private let reader: any DatabaseReader

    /// The outbox in the file `writer` writes, whose tables the migrations made.
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

    // MARK: - Tables

    /// Creates the outbox's first tables (a store's first outbox migration): a body per event
    /// and a row per subscriber and event. ``addCursors(in:)`` replaces them; both run, in that
    /// order, so files made before the change are converted.
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

    /// Moves the outbox to one row per event and a cursor per subscriber (a store's second
    /// outbox migration), keeping every waiting event, its failures and the dead letters.
    public static func addCursors(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE outbox_entry (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                event_id TEXT NOT NULL,
                body BLOB NOT NULL,
                time INTEGER NOT NULL,
                subscribers TEXT NOT NULL
            );
            CREATE TABLE outbox_cursor (subscriber TEXT PRIMARY KEY NOT NULL, done INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE outbox_done (
                subscriber TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (subscriber, seq)) WITHOUT ROWID;
            CREATE TABLE outbox_attempt (
                subscriber TEXT NOT NULL, seq INTEGER NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (subscriber, seq)
            ) WITHOUT ROWID;
            """)
        // Each waiting place becomes an entry of its own (the order of the old sequences kept).
        let places = try Row.fetchAll(db, sql: """
            SELECT e.seq, e.subscriber, e.attempts, b.event_id, b.body, b.time
            FROM outbox_event e JOIN outbox_body b ON b.id = e.body_id ORDER BY e.seq
            """)
        for place in places {
            let subscriber: String = place["subscriber"]
            try db.execute(
                sql: "INSERT INTO outbox_entry (event_id, body, time, subscribers) VALUES (?, ?, ?, ?)",
                arguments: [place["event_id"], place["body"], place["time"], listed([subscriber])])
            let sequence = db.lastInsertedRowID
            try db.execute(sql: "INSERT OR IGNORE INTO outbox_cursor (subscriber, done) VALUES (?, 0)", arguments: [subscriber])
            let attempts: Int = place["attempts"]
            if attempts > 0 {
                try db.execute(
                    sql: "INSERT INTO outbox_attempt (subscriber, seq, attempts) VALUES (?, ?, ?)",
                    arguments: [subscriber, sequence, attempts])
            }
        }
        try db.execute(sql: "DROP TABLE outbox_event; DROP TABLE outbox_body;")
    }

    /// The `subscribers` column for a list of names: each between commas, found with `instr`.
    /// (Names are letters, digits, `-` and `_`.)
    public static func listed(_ subscribers: [String]) -> String { "," + subscribers.joined(separator: ",") + "," }

    // MARK: - Recording

    /// `events` as entries: those with the same ID are one, listing its subscribers, in the
    /// order of their first event.
    public static func entries(_ events: [OutboxEvent]) -> [(event: OutboxEvent, subscribers: [String])] {
        // Recorders list an event's subscribers together: runs of one ID are grouped in one
        // pass, and only IDs that come back after another's run need the dictionary.
        var runs: [(event: OutboxEvent, subscribers: [String])] = []
        for event in events {
            if let last = runs.indices.last, runs[last].event.id == event.id {
                runs[last].subscribers.append(event.subscriber)
            } else {
                runs.append((event, [event.subscriber]))
            }
        }
        guard runs.count > 1, Set(runs.map(\.event.id)).count < runs.count else { return runs }
        var order: [String] = []
        var byID: [String: (event: OutboxEvent, subscribers: [String])] = [:]
        for run in runs {
            if byID[run.event.id] == nil {
                order.append(run.event.id)
                byID[run.event.id] = (run.event, [])
            }
            byID[run.event.id]!.subscribers += run.subscribers
        }
        return order.map { byID[$0]! }
    }

    /// Records `events` inside the caller's transaction (the one committing their change).
    /// Events with the same ID are one event, for several subscribers: one entry.
    /// - Parameter known: the subscribers whose cursors the file is known to hold (the store
    ///   keeps it); nil checks every one.
    public static func record(_ events: [OutboxEvent], in db: Database, known: OutboxSubscribers? = nil) throws {
        guard !events.isEmpty else { return }
        let unknown = known?.unknown(in: events)
        let entry = try db.cachedStatement(sql: "INSERT INTO outbox_entry (event_id, body, time, subscribers) VALUES (?, ?, ?, ?)")
        // A subscriber's cursor exists from its first event on, so no entry is ever removed
        // before every subscriber listed in it is done with it.
        let cursor = try db.cachedStatement(sql: "INSERT OR IGNORE INTO outbox_cursor (subscriber, done) VALUES (?, 0)")
        for (event, subscribers) in entries(events) {
            try entry.execute(arguments: [event.id, Data(event.body), event.time, listed(subscribers)])
            for subscriber in subscribers where unknown?.contains(subscriber) ?? true { try cursor.execute(arguments: [subscriber]) }
        }
        if let known, let unknown { known.remember(unknown, after: db) }
    }

    // MARK: - Delivering

    public func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent] {
        try await reader.read { db in
            let done = try Int64.fetchOne(db, sql: "SELECT done FROM outbox_cursor WHERE subscriber = ?", arguments: [subscriber]) ?? 0
            return try Row.fetchAll(db, sql: """
                SELECT e.seq, e.event_id, e.body, e.time, coalesce(a.attempts, 0) AS attempts FROM outbox_entry e
                LEFT JOIN outbox_attempt a ON a.subscriber = ?1 AND a.seq = e.seq
                WHERE e.seq > ?2 AND instr(e.subscribers, ?3) > 0
                    AND NOT EXISTS (SELECT 1 FROM outbox_done d WHERE d.subscriber = ?1 AND d.seq = e.seq)
                ORDER BY e.seq LIMIT ?4
                """, arguments: [subscriber, max(sequence, done), Self.listed([subscriber]), limit]).map { row in
                StoredEvent(
                    sequence: row["seq"],
                    event: OutboxEvent(subscriber: subscriber, id: row["event_id"], body: Array(row["body"] as Data), time: row["time"]),
                    attempts: row["attempts"])
            }
        }
    }

    public func remove(_ sequences: [Int64], for subscriber: String) async throws {
        guard !sequences.isEmpty else { return }
        try await unsynced { db in try Self.finish(sequences, for: subscriber, in: db) }
    }

    /// Marks events done for `subscriber`, moves its cursor past every done event it can, and
    /// removes the entries every cursor passed.
    private static func finish(_ sequences: [Int64], for subscriber: String, in db: Database) throws {
        let current = try Int64.fetchOne(db, sql: "SELECT done FROM outbox_cursor WHERE subscriber = ?", arguments: [subscriber]) ?? 0
        var done = Set(sequences.filter { $0 > current })
        done.formUnion(try Int64.fetchAll(
            db, sql: "SELECT seq FROM outbox_done WHERE subscriber = ? AND seq > ?", arguments: [subscriber, current]))
        guard !done.isEmpty else { return }
        // Walk the subscriber's entries in order while they are done.
        var cursor = current
        let upcoming = try Int64.fetchAll(db, sql: """
            SELECT seq FROM outbox_entry WHERE seq > ? AND instr(subscribers, ?) > 0 ORDER BY seq LIMIT ?
            """, arguments: [current, listed([subscriber]), done.count + 1])
        for sequence in upcoming {
            guard done.contains(sequence) else { break }
            cursor = sequence
        }
        try db.execute(
            sql: "INSERT INTO outbox_cursor (subscriber, done) VALUES (?, ?) ON CONFLICT (subscriber) DO UPDATE SET done = excluded.done",
            arguments: [subscriber, cursor])
        try db.execute(sql: "DELETE FROM outbox_done WHERE subscriber = ? AND seq <= ?", arguments: [subscriber, cursor])
        try db.execute(sql: "DELETE FROM outbox_attempt WHERE subscriber = ? AND seq <= ?", arguments: [subscriber, cursor])
        let mark = try db.cachedStatement(sql: "INSERT OR IGNORE INTO outbox_done (subscriber, seq) VALUES (?, ?)")
        let attempt = try db.cachedStatement(sql: "DELETE FROM outbox_attempt WHERE subscriber = ? AND seq = ?")
        for sequence in done where sequence > cursor {
            try mark.execute(arguments: [subscriber, sequence])
            try attempt.execute(arguments: [subscriber, sequence])
        }
        if current < cursor { try prune(after: current, through: cursor, in: db) }
    }

    /// Removes the entries in a range whose listed subscribers' cursors all passed them. An
    /// entry goes when the last of its subscribers moves past it, so looking at the range one
    /// cursor just crossed finds every entry that became removable.
    private static func prune(after start: Int64, through end: Int64, in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM outbox_entry WHERE seq > ? AND seq <= ? AND NOT EXISTS (
                SELECT 1 FROM outbox_cursor c
                WHERE c.done < outbox_entry.seq AND instr(outbox_entry.subscribers, ',' || c.subscriber || ',') > 0)
            """, arguments: [start, end])
    }

    public func recordFailure(of sequence: Int64, for subscriber: String) async throws {
        try await unsynced { db in
            try db.execute(sql: """
                INSERT INTO outbox_attempt (subscriber, seq, attempts) VALUES (?, ?, 1)
                ON CONFLICT (subscriber, seq) DO UPDATE SET attempts = attempts + 1
                """, arguments: [subscriber, sequence])
        }
    }

    public func deadLetter(
        _ sequence: Int64, for subscriber: String, attempts: Int, reason: String, at time: Int64, keeping limit: Int
    ) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: """
                INSERT INTO outbox_dead_letter (subscriber, id, body, time, attempts, failed_at, reason)
                SELECT ?, event_id, body, time, ?, ?, ? FROM outbox_entry WHERE seq = ?
                """, arguments: [subscriber, attempts, time, reason, sequence])
            try Self.finish([sequence], for: subscriber, in: db)
            // Every letter of the subscriber's older than its `limit` newest.
            try db.execute(sql: """
                DELETE FROM outbox_dead_letter WHERE subscriber = ? AND seq <= (
                    SELECT seq FROM outbox_dead_letter WHERE subscriber = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                """, arguments: [subscriber, subscriber, max(0, limit)])
            return db.changesCount
        }
    }

    // MARK: - Dead letters

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

    // MARK: - Counting

    public func waiting(for subscriber: String) async throws -> Int {
        try await reader.read { db in try Self.waiting(for: subscriber, in: db) }
    }

    private static func waiting(for subscriber: String, in db: Database) throws -> Int {
        let done = try Int64.fetchOne(db, sql: "SELECT done FROM outbox_cursor WHERE subscriber = ?", arguments: [subscriber]) ?? 0
        let listed = try Int.fetchOne(
            db, sql: "SELECT count(*) FROM outbox_entry WHERE seq > ? AND instr(subscribers, ?) > 0",
            arguments: [done, listed([subscriber])]) ?? 0
        let marked = try Int.fetchOne(
            db, sql: "SELECT count(*) FROM outbox_done WHERE subscriber = ? AND seq > ?", arguments: [subscriber, done]) ?? 0
        return listed - marked
    }

    public func backlog() async throws -> [String: Int] {
        try await reader.read { db in
            var counts: [String: Int] = [:]
            for subscriber in try String.fetchAll(db, sql: "SELECT subscriber FROM outbox_cursor") {
                let waiting = try Self.waiting(for: subscriber, in: db)
                if waiting > 0 { counts[subscriber] = waiting }
            }
            return counts
        }
    }

    public func retain(subscribers: Set<String>) async throws -> [String: Int] {
        try await writer.write { db in
            var forgotten: [String: Int] = [:]
            for subscriber in try String.fetchAll(db, sql: "SELECT subscriber FROM outbox_cursor") where !subscribers.contains(subscriber) {
                forgotten[subscriber] = try Self.waiting(for: subscriber, in: db)
                for table in ["outbox_cursor", "outbox_done", "outbox_attempt"] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE subscriber = ?", arguments: [subscriber])
                }
            }
            if !forgotten.isEmpty { try Self.prune(after: 0, through: .max, in: db) }
            return forgotten
        }
    }
}
