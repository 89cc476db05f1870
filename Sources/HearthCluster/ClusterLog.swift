import Foundation
import HearthOutbox
import Logging
import PostgresNIO

/// The write log a cluster shares, in PostgreSQL: for each database, one gapless sequence of
/// records that every node appends to and follows, so every node applies the same writes in
/// the same order (no home-made consensus: PostgreSQL's transactions order them).
///
/// A node appends after the position it has applied. The database's head row is locked for the
/// append, so appends to one database are serialized; when another node's append got there
/// first, nothing is written and the answer says how far the log has gone (``AppendResult/behind(latest:)``),
/// so the node catches up, checks its write again and retries. The append commits with a
/// `NOTIFY` on ``channel`` carrying `<database> <seq>`, which wakes the other nodes; they read
/// what they missed by sequence (``entries(database:after:limit:)``), so a lost notification
/// delays nothing for longer than the next one or the next poll.
///
/// Threading: all state is in PostgreSQL; the type is a thin, `Sendable` wrapper over a
/// `PostgresClient` (a connection pool the caller runs as a service).
public final class ClusterLog: Sendable {
    /// The notification channel appends are announced on.
    public static let channel = "hearth_log"

    /// One record of the log.
    public struct Entry: Sendable, Equatable {
        public var sequence: Int64
        /// `set` or `merge`, as the single-node log writes them.
        public var kind: String
        public var path: String
        public var data: [UInt8]
        /// The node that appended it.
        public var node: String

        public init(sequence: Int64, kind: String, path: String, data: [UInt8], node: String) {
            self.sequence = sequence
            self.kind = kind
            self.path = path
            self.data = data
            self.node = node
        }
    }

    /// A record to append (its sequence is given by the append).
    public struct Record: Sendable, Equatable {
        public var kind: String
        public var path: String
        public var data: [UInt8]

        public init(kind: String, path: String, data: [UInt8]) {
            self.kind = kind
            self.path = path
            self.data = data
        }
    }

    /// What an append did.
    public enum AppendResult: Sendable, Equatable {
        /// Written: the last record's sequence.
        case appended(last: Int64)
        /// Nothing written: the log is past the position the node gave (at `latest`).
        case behind(latest: Int64)
    }

    /// The connection pool it uses.
    public let client: PostgresClient
    let logger: Logger
    /// This node's ID, recorded with what it appends as a ``HearthStore/SharedLog``.
    public let node: String
    /// How long an append or a catch-up read may take before the node gives up on it.
    public let operationTimeout: Duration

    /// - Parameters:
    ///   - client: a running client (its `run()` is the caller's to run).
    ///   - node: the ID of the node appending.
    public init(client: PostgresClient, node: String = "", operationTimeout: Duration = .seconds(5), logger: Logger) {
        self.client = client
        self.node = node
        self.operationTimeout = operationTimeout
        self.logger = logger
    }

    /// Makes the tables when they are missing (safe to run on every node at start), the
    /// outboxes' among them (the databases' events are recorded with their appends).
    public func prepare() async throws {
        try await PostgresOutbox.prepare(on: client, logger: logger)
        try await Self.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_log_head (
                database TEXT PRIMARY KEY,
                sequence BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_log (
                database TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                kind TEXT NOT NULL,
                path TEXT NOT NULL,
                data BYTEA NOT NULL,
                node TEXT NOT NULL,
                committed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                PRIMARY KEY (database, sequence)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_snapshot (
                database TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                chunk INTEGER NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (database, sequence, chunk)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_snapshot_done (
                database TEXT NOT NULL,
                sequence BIGINT NOT NULL,
                settings TEXT NOT NULL,
                bytes BIGINT NOT NULL,
                node TEXT NOT NULL,
                created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                PRIMARY KEY (database, sequence)
            )
            """,
        ])
    }

    /// Runs `statements` (table definitions) in one transaction, one node at a time: two nodes
    /// starting together would otherwise both try to create the tables.
    static func createTables(on client: PostgresClient, logger: Logger, _ statements: [PostgresQuery]) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7361001)", logger: logger)
            for statement in statements { try await connection.query(statement, logger: logger) }
        }
    }

    /// Appends `records` to `database`'s log right after `position` (the last sequence the
    /// node has applied), atomically, announced on ``channel`` when it commits; with `events`,
    /// records them in the database's outbox in the same transaction.
    ///
    /// Without events, one statement: moving the head row from `position` (its row lock orders appends to the
    /// database; an append that finds it moved changes nothing), inserting the records and
    /// announcing them. The lock is held for that one statement only, never across a round
    /// trip, so a node that vanishes mid-append holds up no other.
    /// - Returns: the last new sequence, or how far the log is when it is past `position`.
    public func append(
        database: String, after position: Int64, records: [Record], events: [OutboxEvent] = [], node: String
    ) async throws -> AppendResult {
        precondition(!records.isEmpty, "an append holds at least one record")
        if !events.isEmpty { return try await appendRecording(database: database, after: position, records: records, events: events, node: node) }
        if position == 0 {
            try await client.query(
                "INSERT INTO hearth_log_head (database, sequence) VALUES (\(database), 0) ON CONFLICT (database) DO NOTHING",
                logger: logger)
        }
        let last = position + Int64(records.count)
        let sequences = Array((position + 1)...last)
        let kinds = records.map(\.kind)
        let paths = records.map(\.path)
        let data = records.map { ByteBuffer(bytes: $0.data) }
        let announcement = "\(database) \(last)"
        let rows = try await client.query(
            """
            WITH moved AS (
                UPDATE hearth_log_head SET sequence = \(last)
                WHERE database = \(database) AND sequence = \(position)
                RETURNING sequence
            ), inserted AS (
                INSERT INTO hearth_log (database, sequence, kind, path, data, node)
                SELECT \(database), s, k, p, d, \(node)
                FROM unnest(\(sequences)::bigint[], \(kinds)::text[], \(paths)::text[], \(data)::bytea[]) AS t(s, k, p, d)
                WHERE EXISTS (SELECT 1 FROM moved)
                RETURNING 1
            ), announced AS (
                SELECT pg_notify(\(Self.channel), \(announcement)) WHERE EXISTS (SELECT 1 FROM moved)
            )
            SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM announced),
                COALESCE((SELECT sequence FROM hearth_log_head WHERE database = \(database)), 0)
            """, logger: logger)
        var inserted: Int64 = 0
        var head: Int64 = 0
        for try await (count, _, latest) in rows.decode((Int64, Int64, Int64).self) {
            inserted = count
            head = latest
        }
        if inserted == Int64(records.count) { return .appended(last: last) }
        // The head had moved: nothing was written. (The head read here may predate the move;
        // the node reads what it missed by sequence either way.)
        return .behind(latest: max(head, position + 1))
    }

    /// ``append(database:after:records:events:node:)`` with events: one transaction that moves
    /// the head first (its row lock orders appends, and the outbox's sequences with them),
    /// then inserts the records and the events. The lock is held for a few round trips; a node
    /// that vanishes meanwhile has its transaction ended by `idle_in_transaction_session_timeout`.
    private func appendRecording(
        database: String, after position: Int64, records: [Record], events: [OutboxEvent], node: String
    ) async throws -> AppendResult {
        try await client.withTransaction(logger: logger) { connection in
            let logger = self.logger
            if position == 0 {
                try await connection.query(
                    "INSERT INTO hearth_log_head (database, sequence) VALUES (\(database), 0) ON CONFLICT (database) DO NOTHING",
                    logger: logger)
            }
            let last = position + Int64(records.count)
            let moved = try await connection.query(
                """
                UPDATE hearth_log_head SET sequence = \(last) WHERE database = \(database) AND sequence = \(position)
                RETURNING sequence
                """, logger: logger)
            var didMove = false
            for try await _ in moved { didMove = true }
            guard didMove else {
                let rows = try await connection.query(
                    "SELECT sequence FROM hearth_log_head WHERE database = \(database)", logger: logger)
                var head: Int64 = 0
                for try await (sequence) in rows.decode(Int64.self) { head = sequence }
                return .behind(latest: max(head, position + 1))
            }
            let sequences = Array((position + 1)...last)
            let kinds = records.map(\.kind)
            let paths = records.map(\.path)
            let data = records.map { ByteBuffer(bytes: $0.data) }
            try await connection.query(
                """
                INSERT INTO hearth_log (database, sequence, kind, path, data, node)
                SELECT \(database), s, k, p, d, \(node)
                FROM unnest(\(sequences)::bigint[], \(kinds)::text[], \(paths)::text[], \(data)::bytea[]) AS t(s, k, p, d)
                """, logger: logger)
            try await PostgresOutbox.record(events, source: Self.outboxSource(database), on: connection, logger: logger)
            let announcement = "\(database) \(last)"
            try await connection.query("SELECT pg_notify(\(Self.channel), \(announcement))", logger: logger)
            return .appended(last: last)
        }
    }

    /// The registry of nodes on the same PostgreSQL.
    public func nodes() -> ClusterNodes { ClusterNodes(client: client, logger: logger) }

    /// Up to `limit` records of `database` after `position`, in order.
    public func entries(database: String, after position: Int64, limit: Int = 1000) async throws -> [Entry] {
        let rows = try await client.query(
            """
            SELECT sequence, kind, path, data, node FROM hearth_log
            WHERE database = \(database) AND sequence > \(position)
            ORDER BY sequence LIMIT \(limit)
            """, logger: logger)
        var entries: [Entry] = []
        for try await (sequence, kind, path, data, node) in rows.decode((Int64, String, String, ByteBuffer, String).self) {
            entries.append(Entry(sequence: sequence, kind: kind, path: path, data: Array(data.readableBytesView), node: node))
        }
        return entries
    }

    /// The last sequence of `database`'s log (0 when it has none).
    public func latest(database: String) async throws -> Int64 {
        let rows = try await client.query("SELECT sequence FROM hearth_log_head WHERE database = \(database)", logger: logger)
        var head: Int64 = 0
        for try await (sequence) in rows.decode(Int64.self) { head = sequence }
        return head
    }

    /// Announced appends (database and last sequence), as they commit, until the task is
    /// cancelled. `listening` is called once PostgreSQL listens: appends committed before it
    /// are not announced (a node reads by sequence after it).
    public func announcements(
        listening: @Sendable () -> Void = {}, _ body: @Sendable (_ database: String, _ sequence: Int64) async -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.channel) { notifications in
                listening()
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ")
                    guard parts.count == 2, let sequence = Int64(parts[1]) else { continue }
                    await body(String(parts[0]), sequence)
                }
            }
        }
    }
}
