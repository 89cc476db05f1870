import Foundation
import HearthOutbox
import HearthStore
import PostgresNIO
import Synchronization

/// The cluster log as the store's ``HearthStore/SharedLog``: what a replica ``HearthStore/Database``
/// appends to and follows, and where its snapshots live.
extension ClusterLog: SharedLog {
    public func append(
        database: String, after position: Int64, records: [LogRecord], events: [OutboxEvent]
    ) async throws -> SharedLogAppend {
        let result = try await withDeadline {
            try await self.append(
                database: database, after: position,
                records: records.map { Record(kind: $0.kind, path: $0.path, data: $0.data) }, events: events, node: self.node)
        }
        switch result {
        case .appended(let last): return .appended(last: last)
        case .behind(let latest): return .behind(latest: latest)
        }
    }

    /// One transaction holding the head row's lock: the node's reading, applying and checking
    /// happen under it (PostgreSQL's `idle_in_transaction_session_timeout` ends it if the node
    /// vanishes meanwhile).
    public func appendHoldingHead(
        database: String, after position: Int64, missedAtMost: Int,
        prepare: @escaping @Sendable (_ missed: [LogRecord]) async throws -> (records: [LogRecord], events: [OutboxEvent])
    ) async throws -> Int64? {
        try await withDeadline { (gate: DeadlineGate) in
            try await self.client.withTransaction(logger: self.logger) { connection -> Int64? in
                let logger = self.logger
                if position == 0 {
                    try await connection.query(
                        "INSERT INTO hearth_log_head (database, sequence) VALUES (\(database), 0) ON CONFLICT (database) DO NOTHING",
                        logger: logger)
                }
                let rows = try await connection.query(
                    "SELECT sequence FROM hearth_log_head WHERE database = \(database) FOR UPDATE", logger: logger)
                var head: Int64 = 0
                for try await (sequence) in rows.decode(Int64.self) { head = sequence }
                guard head - position <= Int64(missedAtMost) else { return nil }
                var missed: [LogRecord] = []
                if head > position {
                    let entries = try await connection.query(
                        """
                        SELECT sequence, kind, path, data FROM hearth_log
                        WHERE database = \(database) AND sequence > \(position) AND sequence <= \(head) ORDER BY sequence
                        """, logger: logger)
                    for try await (sequence, kind, path, data) in entries.decode((Int64, String, String, ByteBuffer).self) {
                        missed.append(LogRecord(sequence: sequence, kind: kind, path: path, data: Array(data.readableBytesView)))
                    }
                    guard missed.count == Int(head - position), missed.first?.sequence == position + 1 else { return nil }
                }
                // From here the node changes its own state: this is not given up halfway.
                try gate.pass()
                let (records, events) = try await prepare(missed)
                guard !records.isEmpty else { return head }
                let last = head + Int64(records.count)
                let sequences = Array((head + 1)...last)
                let kinds = records.map(\.kind)
                let paths = records.map(\.path)
                let data = records.map { ByteBuffer(bytes: $0.data) }
                try await connection.query(
                    """
                    INSERT INTO hearth_log (database, sequence, kind, path, data, node)
                    SELECT \(database), s, k, p, d, \(self.node)
                    FROM unnest(\(sequences)::bigint[], \(kinds)::text[], \(paths)::text[], \(data)::bytea[]) AS t(s, k, p, d)
                    """, logger: logger)
                try await connection.query(
                    "UPDATE hearth_log_head SET sequence = \(last) WHERE database = \(database)", logger: logger)
                try await PostgresOutbox.record(events, source: Self.outboxSource(database), on: connection, logger: logger)
                let announcement = "\(database) \(last)"
                try await connection.query("SELECT pg_notify(\(Self.channel), \(announcement))", logger: logger)
                return last
            }
        }
    }

    public func outbox(database: String) -> any EventOutbox {
        PostgresOutbox(source: Self.outboxSource(database), client: client, logger: logger)
    }

    /// The outbox source of a database's events, as a single node names it.
    static func outboxSource(_ database: String) -> String { "database/\(database)" }

    public func records(database: String, after position: Int64, limit: Int) async throws -> [LogRecord] {
        try await withDeadline {
            try await self.entries(database: database, after: position, limit: limit).map {
                LogRecord(sequence: $0.sequence, kind: $0.kind, path: $0.path, data: $0.data)
            }
        }
    }

    /// Runs `operation`, giving up after ``operationTimeout``: with PostgreSQL unreachable the
    /// pool waits for a connection without end, and a client waiting for its write should
    /// hear "unavailable" instead. The operation is cancelled and left to finish on its own
    /// (a query in flight does not stop at once; the connections' statement and idle timeouts
    /// end it in PostgreSQL). An append given up on may still commit: its records then arrive
    /// like another node's.
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withDeadline { (_: DeadlineGate) in try await operation() }
    }

    /// The same, for an operation with a part that must not be abandoned halfway (it changes
    /// the node's own state): once it passes ``DeadlineGate/commit()``, the deadline no longer
    /// applies (PostgreSQL's statement and idle timeouts still bound it); if the deadline
    /// passed first, `commit()` throws and the operation stops there.
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable (DeadlineGate) async throws -> T) async throws -> T {
        let timeout = operationTimeout
        let outcome = Outcome<T>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.waiting.withLock { $0 = (continuation, false) }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation(DeadlineGate(outcome: outcome))) } catch { result = .failure(error) }
                outcome.resume(with: result, byDeadline: false)
            }
            Task {
                try? await Task.sleep(for: timeout)
                if outcome.resume(with: .failure(ClusterUnavailable(timeout: timeout)), byDeadline: true) { work.cancel() }
            }
        }
    }

    /// Reads the newest snapshot in one repeatable-read transaction (a snapshot stored
    /// meanwhile, which deletes the older one's chunks, cannot cut it short), and checks its
    /// size against the one recorded.
    public func newestSnapshot(database: String) async throws -> SharedSnapshot? {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            let done = try await connection.query(
                """
                SELECT sequence, settings, bytes FROM hearth_snapshot_done WHERE database = \(database)
                ORDER BY sequence DESC LIMIT 1
                """, logger: logger)
            var found: (Int64, String, Int64)?
            for try await row in done.decode((Int64, String, Int64).self) { found = row }
            guard let (sequence, settingsText, bytes) = found else { return nil }
            let rows = try await connection.query(
                """
                SELECT data FROM hearth_snapshot WHERE database = \(database) AND sequence = \(sequence) ORDER BY chunk
                """, logger: logger)
            var chunks: [[UInt8]] = []
            for try await (data) in rows.decode(ByteBuffer.self) { chunks.append(Array(data.readableBytesView)) }
            let read = chunks.reduce(0) { $0 + $1.count }
            guard read == bytes, read > 0 else {
                throw ClusterCorrupt("the snapshot of \(database) at \(sequence) has \(read) of its \(bytes) bytes")
            }
            let settings = try JSONDecoder().decode([String: String].self, from: Data(settingsText.utf8))
            return SharedSnapshot(sequence: sequence, chunks: chunks, settings: settings)
        }
    }

    /// Under the database's snapshot lock (a session lock, so the connection is not left in a
    /// transaction while `make` serializes the tree; another node holding it makes this
    /// return false at once), then in one transaction: the snapshot, the older snapshots
    /// dropped, and the log up to the previous snapshot dropped, so a node that is behind by
    /// less than one snapshot's worth still catches up from the log.
    public func storeSnapshot(
        database: String, make: @escaping @Sendable (_ newest: Int64) async throws -> SharedSnapshot?
    ) async throws -> Bool {
        try await client.withConnection { connection in
            let locked = try await connection.query(
                "SELECT pg_try_advisory_lock(7361002, hashtext(\(database)))", logger: logger)
            var gotLock = false
            for try await (value) in locked.decode(Bool.self) { gotLock = value }
            guard gotLock else { return false }
            do {
                let stored = try await storeLocked(database: database, on: connection, make: make)
                try await connection.query("SELECT pg_advisory_unlock(7361002, hashtext(\(database)))", logger: logger)
                return stored
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(7361002, hashtext(\(database)))", logger: logger)
                throw error
            }
        }
    }

    private func storeLocked(
        database: String, on connection: PostgresConnection,
        make: @Sendable (_ newest: Int64) async throws -> SharedSnapshot?
    ) async throws -> Bool {
        let newest = try await connection.query(
            "SELECT COALESCE(MAX(sequence), 0) FROM hearth_snapshot_done WHERE database = \(database)", logger: logger)
        var previous: Int64 = 0
        for try await (value) in newest.decode(Int64.self) { previous = value }
        guard let snapshot = try await make(previous), snapshot.sequence > previous else { return false }
        let settings = String(decoding: try JSONEncoder().encode(snapshot.settings), as: UTF8.self)
        let bytes = Int64(snapshot.chunks.reduce(0) { $0 + $1.count })
        try await connection.query("BEGIN", logger: logger)
        for (index, chunk) in snapshot.chunks.enumerated() {
            let data = ByteBuffer(bytes: chunk)
            try await connection.query(
                """
                INSERT INTO hearth_snapshot (database, sequence, chunk, data)
                VALUES (\(database), \(snapshot.sequence), \(Int32(index)), \(data))
                ON CONFLICT (database, sequence, chunk) DO UPDATE SET data = excluded.data
                """, logger: logger)
        }
        try await connection.query(
            """
            INSERT INTO hearth_snapshot_done (database, sequence, settings, bytes, node)
            VALUES (\(database), \(snapshot.sequence), \(settings), \(bytes), \(node))
            """, logger: logger)
        try await connection.query(
            "DELETE FROM hearth_snapshot WHERE database = \(database) AND sequence < \(snapshot.sequence)", logger: logger)
        try await connection.query(
            "DELETE FROM hearth_snapshot_done WHERE database = \(database) AND sequence < \(snapshot.sequence)", logger: logger)
        try await connection.query(
            "DELETE FROM hearth_log WHERE database = \(database) AND sequence <= \(previous)", logger: logger)
        try await connection.query("COMMIT", logger: logger)
        return true
    }

    /// True when the cluster has a log or a snapshot of the database `name`.
    public func databaseExists(named name: String) async throws -> Bool {
        let rows = try await client.query(
            """
            SELECT 1 FROM hearth_log_head WHERE database = \(name)
            UNION ALL SELECT 1 FROM hearth_snapshot_done WHERE database = \(name) LIMIT 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Names of the databases the cluster has a log or a snapshot for.
    public func databaseNames() async throws -> [String] {
        let rows = try await client.query(
            "SELECT database FROM hearth_log_head UNION SELECT database FROM hearth_snapshot_done ORDER BY 1", logger: logger)
        var names: [String] = []
        for try await (name) in rows.decode(String.self) { names.append(name) }
        return names
    }
}

/// PostgreSQL did not answer in time.
public struct ClusterUnavailable: Error, CustomStringConvertible {
    public var timeout: Duration
    public var description: String { "PostgreSQL did not answer within \(timeout)" }
}

/// What PostgreSQL holds is not what Hearth stored.
public struct ClusterCorrupt: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The one continuation a deadline race resumes: whichever side comes first, unless the
/// operation passed its gate (then only the operation).
final class Outcome<T: Sendable>: Sendable {
    let waiting = Mutex<(continuation: CheckedContinuation<T, any Error>, committed: Bool)?>(nil)

    /// Resumes the waiter unless the other side did (or, for the deadline, the operation is
    /// past its gate); true when this call did.
    @discardableResult
    func resume(with result: Result<T, any Error>, byDeadline: Bool) -> Bool {
        let continuation = waiting.withLock { waiting -> CheckedContinuation<T, any Error>? in
            guard let current = waiting, !(byDeadline && current.committed) else { return nil }
            waiting = nil
            return current.continuation
        }
        guard let continuation else { return false }
        continuation.resume(with: result)
        return true
    }

    /// Marks the operation past its gate; false when the deadline already answered.
    func commit() -> Bool {
        waiting.withLock { waiting in
            guard waiting != nil else { return false }
            waiting!.committed = true
            return true
        }
    }
}

/// What an operation under a deadline passes before it changes anything that must not be left
/// half done.
struct DeadlineGate: Sendable {
    let commit: @Sendable () -> Bool

    init<T>(outcome: Outcome<T>) {
        commit = { outcome.commit() }
    }

    /// - Throws: ``ClusterUnavailable`` when the deadline already passed: stop here.
    func pass() throws {
        guard commit() else { throw ClusterUnavailable(timeout: .zero) }
    }
}
