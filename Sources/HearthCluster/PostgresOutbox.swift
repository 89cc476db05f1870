import Foundation
import HearthOutbox
import Logging
import PostgresNIO

/// An outbox kept in the cluster's PostgreSQL: ``HearthOutbox/SQLiteOutbox``'s layout and
/// semantics (one row per event listing its subscribers, a cursor per subscriber, marks of
/// events finished out of order, failure counts, dead letters), in tables shared by every
/// source and keyed by it (`database/<name>`, `accounts`, `files`). A store records its events
/// inside the PostgreSQL transaction that commits the change (``record(_:source:on:logger:)``),
/// so both commit together or not at all, whichever node made the change.
///
/// **Sequences are given under the source's head row** (`hearth_outbox_head`), moved in the
/// recording transaction: a second recorder of the same source waits for the first to commit,
/// so sequences become visible in the order they were given. (A plain sequence would not do:
/// a transaction holding a lower number could commit after a higher one was delivered, and the
/// cursor would already be past it.) The head never goes back, so a number is never given twice.
///
/// Delivery's writes lock the subscriber's cursor row for their transaction, so two of them
/// for one subscriber never move it from the same reading. Removing entries every cursor
/// passed looks at the other subscribers' cursors without locking them: when two subscribers
/// pass an entry at the same moment, each may miss the other's move and leave it; such an entry
/// is waiting for no one (every cursor is past it) and goes with the next ``retain(subscribers:)``,
/// which runs whenever lanes start.
///
/// Threading: all state is in PostgreSQL; a thin, `Sendable` wrapper over a running client.
public final class PostgresOutbox: EventOutbox {
    public let source: String
    let client: PostgresClient
    let logger: Logger

    /// - Parameter client: a running client whose database ``prepare(on:logger:)`` prepared.
    public init(source: String, client: PostgresClient, logger: Logger) {
        self.source = source
        self.client = client
        self.logger = logger
    }

    // MARK: - Tables

    /// Makes the tables when they are missing (part of the cluster's table preparation).
    public static func prepare(on client: PostgresClient, logger: Logger) async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            "CREATE TABLE IF NOT EXISTS hearth_outbox_head (source TEXT PRIMARY KEY, sequence BIGINT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS hearth_outbox_entry (
                source TEXT NOT NULL,
                seq BIGINT NOT NULL,
                event_id TEXT NOT NULL,
                body BYTEA NOT NULL,
                time BIGINT NOT NULL,
                subscribers TEXT NOT NULL,
                PRIMARY KEY (source, seq)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_outbox_cursor (
                source TEXT NOT NULL, subscriber TEXT NOT NULL, done BIGINT NOT NULL, PRIMARY KEY (source, subscriber))
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_outbox_done (
                source TEXT NOT NULL, subscriber TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (source, subscriber, seq))
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_outbox_attempt (
                source TEXT NOT NULL, subscriber TEXT NOT NULL, seq BIGINT NOT NULL, attempts INTEGER NOT NULL,
                PRIMARY KEY (source, subscriber, seq))
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_outbox_dead_letter (
                seq BIGSERIAL PRIMARY KEY,
                source TEXT NOT NULL,
                subscriber TEXT NOT NULL,
                id TEXT NOT NULL,
                body BYTEA NOT NULL,
                time BIGINT NOT NULL,
                attempts INTEGER NOT NULL,
                failed_at BIGINT NOT NULL,
                reason TEXT NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_outbox_dead_letter_by_subscriber ON hearth_outbox_dead_letter (source, subscriber, seq)",
        ])
    }

    // MARK: - Recording

    /// Records `events` of `source` inside the caller's transaction on `connection` (the one
    /// committing their change); call it late in the transaction, since it holds the source's
    /// head row until the commit. Events with the same ID are one entry, for several subscribers.
    /// - Returns: the sequence of the last entry, nil for no events.
    @discardableResult
    public static func record(
        _ events: [OutboxEvent], source: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64? {
        guard !events.isEmpty else { return nil }
        let entries = SQLiteOutbox.entries(events)
        let count = Int64(entries.count)
        let moved = try await connection.query(
            """
            INSERT INTO hearth_outbox_head (source, sequence) VALUES (\(source), \(count))
            ON CONFLICT (source) DO UPDATE SET sequence = hearth_outbox_head.sequence + \(count)
            RETURNING sequence
            """, logger: logger)
        var last: Int64 = 0
        for try await (sequence) in moved.decode(Int64.self) { last = sequence }
        let sequences = Array((last - count + 1)...last)
        let ids = entries.map(\.event.id)
        let bodies = entries.map { ByteBuffer(bytes: $0.event.body) }
        let times = entries.map(\.event.time)
        let subscribers = entries.map { SQLiteOutbox.listed($0.subscribers) }
        try await connection.query(
            """
            INSERT INTO hearth_outbox_entry (source, seq, event_id, body, time, subscribers)
            SELECT \(source), s, i, b, t, l
            FROM unnest(\(sequences)::bigint[], \(ids)::text[], \(bodies)::bytea[], \(times)::bigint[], \(subscribers)::text[])
                AS e(s, i, b, t, l)
            """, logger: logger)
        // A subscriber's cursor exists from its first event on, so no entry is removed before
        // every subscriber listed in it is done with it.
        let names = Array(Set(events.map(\.subscriber))).sorted()
        try await connection.query(
            """
            INSERT INTO hearth_outbox_cursor (source, subscriber, done)
            SELECT \(source), n, 0 FROM unnest(\(names)::text[]) AS c(n) ON CONFLICT DO NOTHING
            """, logger: logger)
        return last
    }

    // MARK: - Delivering

    public func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent] {
        let listed = SQLiteOutbox.listed([subscriber])
        let rows = try await client.query(
            """
            SELECT e.seq, e.event_id, e.body, e.time, coalesce(a.attempts, 0) FROM hearth_outbox_entry e
            LEFT JOIN hearth_outbox_attempt a ON a.source = e.source AND a.subscriber = \(subscriber) AND a.seq = e.seq
            WHERE e.source = \(source)
                AND e.seq > greatest(\(sequence), coalesce((SELECT done FROM hearth_outbox_cursor
                    WHERE source = \(source) AND subscriber = \(subscriber)), 0))
                AND strpos(e.subscribers, \(listed)) > 0
                AND NOT EXISTS (SELECT 1 FROM hearth_outbox_done d
                    WHERE d.source = e.source AND d.subscriber = \(subscriber) AND d.seq = e.seq)
            ORDER BY e.seq LIMIT \(limit)
            """, logger: logger)
        var events: [StoredEvent] = []
        for try await (seq, id, body, time, attempts) in rows.decode((Int64, String, ByteBuffer, Int64, Int32).self) {
            events.append(StoredEvent(
                sequence: seq, event: OutboxEvent(subscriber: subscriber, id: id, body: Array(body.readableBytesView), time: time),
                attempts: Int(attempts)))
        }
        return events
    }

    public func remove(_ sequences: [Int64], for subscriber: String) async throws {
        guard !sequences.isEmpty else { return }
        try await client.retryingTransaction(logger: logger) { [source, logger] connection in
            try await Self.finish(sequences, for: subscriber, source: source, on: connection, logger: logger)
        }
    }

    /// Marks events done for `subscriber`, moves its cursor past every done event it can, and
    /// removes the entries every cursor passed. Holds the cursor's row for the transaction.
    private static func finish(
        _ sequences: [Int64], for subscriber: String, source: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let cursorRows = try await connection.query(
            "SELECT done FROM hearth_outbox_cursor WHERE source = \(source) AND subscriber = \(subscriber) FOR UPDATE",
            logger: logger)
        var current: Int64 = 0
        for try await (done) in cursorRows.decode(Int64.self) { current = done }
        var done = Set(sequences.filter { $0 > current })
        let marks = try await connection.query(
            "SELECT seq FROM hearth_outbox_done WHERE source = \(source) AND subscriber = \(subscriber) AND seq > \(current)",
            logger: logger)
        for try await (seq) in marks.decode(Int64.self) { done.insert(seq) }
        guard !done.isEmpty else { return }
        // Walk the subscriber's entries in order while they are done.
        var cursor = current
        let upcoming = try await connection.query(
            """
            SELECT seq FROM hearth_outbox_entry
            WHERE source = \(source) AND seq > \(current) AND strpos(subscribers, \(SQLiteOutbox.listed([subscriber]))) > 0
            ORDER BY seq LIMIT \(done.count + 1)
            """, logger: logger)
        var walking = true
        for try await (seq) in upcoming.decode(Int64.self) where walking {
            if done.contains(seq) { cursor = seq } else { walking = false }
        }
        try await connection.query(
            """
            INSERT INTO hearth_outbox_cursor (source, subscriber, done) VALUES (\(source), \(subscriber), \(cursor))
            ON CONFLICT (source, subscriber) DO UPDATE SET done = excluded.done
            """, logger: logger)
        try await connection.query(
            "DELETE FROM hearth_outbox_done WHERE source = \(source) AND subscriber = \(subscriber) AND seq <= \(cursor)",
            logger: logger)
        try await connection.query(
            "DELETE FROM hearth_outbox_attempt WHERE source = \(source) AND subscriber = \(subscriber) AND seq <= \(cursor)",
            logger: logger)
        let marked = done.filter { $0 > cursor }.sorted()
        if !marked.isEmpty {
            try await connection.query(
                """
                INSERT INTO hearth_outbox_done (source, subscriber, seq)
                SELECT \(source), \(subscriber), s FROM unnest(\(marked)::bigint[]) AS m(s) ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM hearth_outbox_attempt
                WHERE source = \(source) AND subscriber = \(subscriber) AND seq = ANY(\(marked)::bigint[])
                """, logger: logger)
        }
        if current < cursor { try await prune(source: source, after: current, through: cursor, on: connection, logger: logger) }
    }

    /// Removes the entries in a range whose listed subscribers' cursors all passed them (see
    /// the type's comment for the one race this leaves to ``retain(subscribers:)``).
    private static func prune(
        source: String, after start: Int64, through end: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            DELETE FROM hearth_outbox_entry e WHERE e.source = \(source) AND e.seq > \(start) AND e.seq <= \(end) AND NOT EXISTS (
                SELECT 1 FROM hearth_outbox_cursor c
                WHERE c.source = e.source AND c.done < e.seq AND strpos(e.subscribers, ',' || c.subscriber || ',') > 0)
            """, logger: logger)
    }

    public func recordFailure(of sequence: Int64, for subscriber: String) async throws {
        try await client.query(
            """
            INSERT INTO hearth_outbox_attempt (source, subscriber, seq, attempts) VALUES (\(source), \(subscriber), \(sequence), 1)
            ON CONFLICT (source, subscriber, seq) DO UPDATE SET attempts = hearth_outbox_attempt.attempts + 1
            """, logger: logger)
    }

    public func deadLetter(
        _ sequence: Int64, for subscriber: String, attempts: Int, reason: String, at time: Int64, keeping limit: Int
    ) async throws -> Int {
        try await client.retryingTransaction(logger: logger) { [source, logger] connection in
            try await connection.query(
                """
                INSERT INTO hearth_outbox_dead_letter (source, subscriber, id, body, time, attempts, failed_at, reason)
                SELECT source, \(subscriber), event_id, body, time, \(Int32(attempts)), \(time), \(reason)
                FROM hearth_outbox_entry WHERE source = \(source) AND seq = \(sequence)
                """, logger: logger)
            try await Self.finish([sequence], for: subscriber, source: source, on: connection, logger: logger)
            // Every letter of the subscriber's older than its `limit` newest.
            let dropped = try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM hearth_outbox_dead_letter WHERE source = \(source) AND subscriber = \(subscriber) AND seq <= (
                        SELECT seq FROM hearth_outbox_dead_letter WHERE source = \(source) AND subscriber = \(subscriber)
                        ORDER BY seq DESC LIMIT 1 OFFSET \(max(0, limit)))
                    RETURNING 1)
                SELECT count(*) FROM gone
                """, logger: logger)
            var count: Int64 = 0
            for try await (value) in dropped.decode(Int64.self) { count = value }
            return Int(count)
        }
    }

    // MARK: - Dead letters

    public func deadLetters(for subscriber: String?, limit: Int) async throws -> [DeadLetter] {
        let rows = try await client.query(
            """
            SELECT seq, subscriber, id, body, time, attempts, failed_at, reason FROM hearth_outbox_dead_letter
            WHERE source = \(source) AND (\(subscriber)::text IS NULL OR subscriber = \(subscriber))
            ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        var letters: [DeadLetter] = []
        for try await (seq, subscriber, id, body, time, attempts, failedAt, reason) in rows.decode(
            (Int64, String, String, ByteBuffer, Int64, Int32, Int64, String).self)
        {
            letters.append(DeadLetter(
                sequence: seq, event: OutboxEvent(subscriber: subscriber, id: id, body: Array(body.readableBytesView), time: time),
                attempts: Int(attempts), failedAt: failedAt, reason: reason))
        }
        return letters
    }

    public func replay(deadLetter sequence: Int64) async throws -> StoredEvent? {
        try await client.retryingTransaction(logger: logger) { [source, logger] connection -> StoredEvent? in
            let rows = try await connection.query(
                """
                DELETE FROM hearth_outbox_dead_letter WHERE source = \(source) AND seq = \(sequence)
                RETURNING subscriber, id, body, time
                """, logger: logger)
            var found: OutboxEvent?
            for try await (subscriber, id, body, time) in rows.decode((String, String, ByteBuffer, Int64).self) {
                found = OutboxEvent(subscriber: subscriber, id: id, body: Array(body.readableBytesView), time: time)
            }
            guard let event = found,
                let replayed = try await Self.record([event], source: source, on: connection, logger: logger)
            else { return nil }
            return StoredEvent(sequence: replayed, event: event, attempts: 0)
        }
    }

    public func discard(deadLetter sequence: Int64) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM hearth_outbox_dead_letter WHERE source = \(source) AND seq = \(sequence) RETURNING 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    // MARK: - Counting

    /// Waiting events by subscriber, `subscriber` alone when given: listed after its cursor,
    /// less those marked done.
    private static func waiting(
        source: String, subscriber: String?, on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: Int] {
        let rows = try await connection.query(
            """
            SELECT c.subscriber,
                (SELECT count(*) FROM hearth_outbox_entry e
                    WHERE e.source = c.source AND e.seq > c.done AND strpos(e.subscribers, ',' || c.subscriber || ',') > 0)
                - (SELECT count(*) FROM hearth_outbox_done d
                    WHERE d.source = c.source AND d.subscriber = c.subscriber AND d.seq > c.done)
            FROM hearth_outbox_cursor c
            WHERE c.source = \(source) AND (\(subscriber)::text IS NULL OR c.subscriber = \(subscriber))
            """, logger: logger)
        var counts: [String: Int] = [:]
        for try await (name, count) in rows.decode((String, Int64).self) { counts[name] = Int(count) }
        return counts
    }

    public func waiting(for subscriber: String) async throws -> Int {
        try await client.withConnection { [source, logger] connection in
            try await Self.waiting(source: source, subscriber: subscriber, on: connection, logger: logger)[subscriber] ?? 0
        }
    }

    public func backlog() async throws -> [String: Int] {
        try await client.withConnection { [source, logger] connection in
            try await Self.waiting(source: source, subscriber: nil, on: connection, logger: logger).filter { $0.value > 0 }
        }
    }

    public func retain(subscribers: Set<String>) async throws -> [String: Int] {
        try await client.retryingTransaction(logger: logger) { [source, logger] connection in
            let all = try await Self.waiting(source: source, subscriber: nil, on: connection, logger: logger)
            let forgotten = all.filter { !subscribers.contains($0.key) }
            let names = Array(forgotten.keys).sorted()
            if !names.isEmpty {
                try await connection.query(
                    "DELETE FROM hearth_outbox_cursor WHERE source = \(source) AND subscriber = ANY(\(names)::text[])", logger: logger)
                try await connection.query(
                    "DELETE FROM hearth_outbox_done WHERE source = \(source) AND subscriber = ANY(\(names)::text[])", logger: logger)
                try await connection.query(
                    "DELETE FROM hearth_outbox_attempt WHERE source = \(source) AND subscriber = ANY(\(names)::text[])", logger: logger)
            }
            // Also what a race between two subscribers' removals left (see the type's comment).
            try await Self.prune(source: source, after: 0, through: .max, on: connection, logger: logger)
            return forgotten
        }
    }
}
