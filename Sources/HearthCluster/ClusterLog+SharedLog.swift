import Foundation
import HearthStore
import PostgresNIO

/// The cluster log as the store's ``HearthStore/SharedLog``: what a replica ``HearthStore/Database``
/// appends to and follows, and where its snapshots live.
extension ClusterLog: SharedLog {
    public func append(database: String, after position: Int64, records: [LogRecord]) async throws -> SharedLogAppend {
        let result = try await withDeadline {
            try await self.append(
                database: database, after: position,
                records: records.map { Record(kind: $0.kind, path: $0.path, data: $0.data) }, node: self.node)
        }
        switch result {
        case .appended(let last): return .appended(last: last)
        case .behind(let latest): return .behind(latest: latest)
        }
    }

    public func records(database: String, after position: Int64, limit: Int) async throws -> [LogRecord] {
        try await withDeadline {
            try await self.entries(database: database, after: position, limit: limit).map {
                LogRecord(sequence: $0.sequence, kind: $0.kind, path: $0.path, data: $0.data)
            }
        }
    }

    /// Runs `operation`, giving up after ``operationTimeout``: with PostgreSQL unreachable the
    /// pool waits for a connection without end, and a client waiting for its write should
    /// hear "unavailable" instead. (An append given up on may still commit: its record then
    /// arrives like another node's.)
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: self.operationTimeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw ClusterUnavailable(timeout: operationTimeout)
            }
            return result
        }
    }

    public func newestSnapshot(database: String) async throws -> SharedSnapshot? {
        try await client.withConnection { connection in
            let done = try await connection.query(
                """
                SELECT sequence, settings FROM hearth_snapshot_done WHERE database = \(database)
                ORDER BY sequence DESC LIMIT 1
                """, logger: logger)
            var found: (Int64, String)?
            for try await row in done.decode((Int64, String).self) { found = row }
            guard let (sequence, settingsText) = found else { return nil }
            let rows = try await connection.query(
                """
                SELECT data FROM hearth_snapshot WHERE database = \(database) AND sequence = \(sequence) ORDER BY chunk
                """, logger: logger)
            var chunks: [[UInt8]] = []
            for try await (data) in rows.decode(ByteBuffer.self) { chunks.append(Array(data.readableBytesView)) }
            let settings = try JSONDecoder().decode([String: String].self, from: Data(settingsText.utf8))
            return SharedSnapshot(sequence: sequence, chunks: chunks, settings: settings)
        }
    }

    /// One transaction: taken only under the database's snapshot lock (another node storing one
    /// makes this return false at once, before `make` runs) and only if it is newer than the
    /// newest stored. It then replaces the older snapshots and drops the log up to the previous
    /// snapshot, so a node that is behind by less than one snapshot's worth still catches up
    /// from the log.
    public func storeSnapshot(
        database: String, make: @escaping @Sendable () async throws -> SharedSnapshot
    ) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let locked = try await connection.query(
                "SELECT pg_try_advisory_xact_lock(7361002, hashtext(\(database)))", logger: logger)
            var gotLock = false
            for try await (value) in locked.decode(Bool.self) { gotLock = value }
            guard gotLock else { return false }
            let newest = try await connection.query(
                "SELECT COALESCE(MAX(sequence), 0) FROM hearth_snapshot_done WHERE database = \(database)", logger: logger)
            var previous: Int64 = 0
            for try await (value) in newest.decode(Int64.self) { previous = value }
            let snapshot = try await make()
            guard snapshot.sequence > previous else { return false }
            let settings = String(decoding: try JSONEncoder().encode(snapshot.settings), as: UTF8.self)
            let bytes = Int64(snapshot.chunks.reduce(0) { $0 + $1.count })
            for (index, chunk) in snapshot.chunks.enumerated() {
                let data = ByteBuffer(bytes: chunk)
                try await connection.query(
                    """
                    INSERT INTO hearth_snapshot (database, sequence, chunk, data)
                    VALUES (\(database), \(snapshot.sequence), \(Int32(index)), \(data))
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
            return true
        }
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
