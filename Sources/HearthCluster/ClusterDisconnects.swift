import Foundation
import HearthStore
import Logging
import PostgresNIO

/// The onDisconnect operations of a cluster node's realtime connections, in PostgreSQL, so
/// that when the node dies another one applies them (see ``ClusterNodes/takeOverExpired(by:)``).
///
/// Claiming (``leftovers()``, ``claim(node:)``) removes the operations in the same statement that
/// returns them, so exactly one node applies each, even when a dead node restarts while
/// another is taking it over.
public final class ClusterDisconnects: DisconnectQueue {
    let client: PostgresClient
    let logger: Logger
    /// The node whose operations this queue keeps.
    public let node: String

    public init(client: PostgresClient, node: String, logger: Logger) {
        self.client = client
        self.node = node
        self.logger = logger
    }

    /// Makes the table when it is missing.
    public func prepare() async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_disconnect (
                node TEXT NOT NULL,
                session TEXT NOT NULL,
                position BIGINT NOT NULL,
                database TEXT NOT NULL,
                kind TEXT NOT NULL,
                path TEXT NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (session, position)
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_disconnect_node ON hearth_disconnect (node)",
            // Who queued each operation (NULL: an admin, or a row an older version kept).
            "ALTER TABLE hearth_disconnect ADD COLUMN IF NOT EXISTS auth BYTEA",
        ])
    }

    public func add(_ record: DisconnectQueueStore.Record) async throws {
        let data = ByteBuffer(bytes: record.data)
        let auth = record.auth.map { ByteBuffer(bytes: $0) }
        try await client.query(
            """
            INSERT INTO hearth_disconnect (node, session, position, database, kind, path, data, auth)
            VALUES (\(node), \(record.session), \(record.position), \(record.database), \(record.kind), \(record.path), \(data), \(auth))
            ON CONFLICT (session, position) DO UPDATE SET database = excluded.database, kind = excluded.kind,
                path = excluded.path, data = excluded.data, auth = excluded.auth
            """, logger: logger)
    }

    public func remove(session: String, positions: [Int64]) async throws {
        guard !positions.isEmpty else { return }
        try await client.query(
            "DELETE FROM hearth_disconnect WHERE session = \(session) AND position = ANY(\(positions))", logger: logger)
    }

    public func remove(session: String) async throws {
        try await client.query("DELETE FROM hearth_disconnect WHERE session = \(session)", logger: logger)
    }

    public func all() async throws -> [DisconnectQueueStore.Record] {
        try await records(
            client.query(
                """
                SELECT session, position, database, kind, path, data, auth FROM hearth_disconnect
                WHERE node = \(node) ORDER BY session, position
                """, logger: logger))
    }

    public func leftovers() async throws -> [DisconnectQueueStore.Record] {
        try await claim(node: node)
    }

    public func claim(session: String, known: [DisconnectQueueStore.Record]) async throws -> [DisconnectQueueStore.Record] {
        let claimed = try await records(
            client.query(
                """
                DELETE FROM hearth_disconnect WHERE session = \(session)
                RETURNING session, position, database, kind, path, data, auth
                """, logger: logger))
        return claimed.sorted { $0.position < $1.position }
    }

    /// Takes over the nodes whose lease ran out and that nobody took over yet, and claims
    /// their operations, in one transaction: a node is taken over by exactly one other, which
    /// gets every operation it had, and a node that renewed its lease meanwhile is left alone.
    /// - Returns: each node taken over, with its operations by session and then position.
    public func takeOverExpired(by taker: String) async throws -> [(node: String, records: [DisconnectQueueStore.Record])] {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE hearth_node SET taken_over_by = \(taker)
                WHERE lease_until < now() AND taken_over_by IS NULL AND id <> \(taker)
                RETURNING id
                """, logger: logger)
            var dead: [String] = []
            for try await (id) in rows.decode(String.self) { dead.append(id) }
            var taken: [(node: String, records: [DisconnectQueueStore.Record])] = []
            for node in dead.sorted() {
                let claimed = try await records(
                    connection.query(
                        """
                        DELETE FROM hearth_disconnect WHERE node = \(node)
                        RETURNING session, position, database, kind, path, data, auth
                        """, logger: logger))
                taken.append((node, claimed.sorted { ($0.session, $0.position) < ($1.session, $1.position) }))
            }
            return taken
        }
    }

    /// Removes and returns the operations of `node` (a dead node this one took over), by
    /// session and then position.
    public func claim(node: String) async throws -> [DisconnectQueueStore.Record] {
        let claimed = try await records(
            client.query(
                """
                DELETE FROM hearth_disconnect WHERE node = \(node)
                RETURNING session, position, database, kind, path, data, auth
                """, logger: logger))
        return claimed.sorted { ($0.session, $0.position) < ($1.session, $1.position) }
    }

    private func records(_ rows: PostgresRowSequence) async throws -> [DisconnectQueueStore.Record] {
        var records: [DisconnectQueueStore.Record] = []
        for try await (session, position, database, kind, path, data, auth) in rows.decode(
            (String, Int64, String, String, String, ByteBuffer, ByteBuffer?).self)
        {
            records.append(DisconnectQueueStore.Record(
                session: session, position: position, database: database, kind: kind, path: path,
                data: Array(data.readableBytesView), auth: auth.map { Array($0.readableBytesView) }))
        }
        return records
    }
}
