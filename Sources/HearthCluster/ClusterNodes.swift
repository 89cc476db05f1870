import Foundation
import Logging
import PostgresNIO

/// The nodes of a cluster, in PostgreSQL: each renews a lease with a heartbeat and reports how
/// far it has applied each database's log. What `hearth cluster status` shows, and how a dead
/// node's work (its connections' onDisconnect operations) is taken over by exactly one other.
///
/// Times are PostgreSQL's (`now()`), so nodes' clocks need not agree.
public final class ClusterNodes: Sendable {
    /// One node as the others see it.
    public struct Status: Sendable, Equatable {
        public var id: String
        public var address: String
        /// True while its lease runs.
        public var alive: Bool
        /// Seconds since its last heartbeat.
        public var silentSeconds: Double
        /// Database name → the last log sequence it applied.
        public var applied: [String: Int64]
        /// Database name → how many records it is behind the log's head.
        public var lag: [String: Int64]
        /// The node that took over its work after its lease ran out, if one did.
        public var takenOverBy: String?
    }

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Makes the tables when they are missing (after ``ClusterLog/prepare()``, whose head table
    /// the lag is computed from).
    public func prepare() async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_node (
                id TEXT PRIMARY KEY,
                address TEXT NOT NULL,
                heartbeat_at TIMESTAMPTZ NOT NULL,
                lease_until TIMESTAMPTZ NOT NULL,
                taken_over_by TEXT
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_node_position (
                node TEXT NOT NULL REFERENCES hearth_node(id) ON DELETE CASCADE,
                database TEXT NOT NULL,
                applied BIGINT NOT NULL,
                PRIMARY KEY (node, database)
            )
            """,
        ])
    }

    /// Renews `node`'s lease for `leaseSeconds` and records how far it has applied each
    /// database. A node that comes back after being taken over starts afresh (its old
    /// connections' work was done by another).
    /// - Returns: true when another node had taken `node` over (its lease had run out): the
    ///   node's connections must end, since their onDisconnect operations already ran.
    @discardableResult
    public func heartbeat(node: String, address: String, leaseSeconds: Int, applied: [String: Int64]) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let previous = try await connection.query(
                "SELECT taken_over_by FROM hearth_node WHERE id = \(node) FOR UPDATE", logger: logger)
            var takenOver = false
            for try await (by) in previous.decode(String?.self) { takenOver = by != nil }
            try await connection.query(
                """
                INSERT INTO hearth_node (id, address, heartbeat_at, lease_until)
                VALUES (\(node), \(address), now(), now() + make_interval(secs => \(leaseSeconds)))
                ON CONFLICT (id) DO UPDATE SET address = excluded.address, heartbeat_at = excluded.heartbeat_at,
                    lease_until = excluded.lease_until, taken_over_by = NULL
                """, logger: logger)
            for (database, position) in applied {
                try await connection.query(
                    """
                    INSERT INTO hearth_node_position (node, database, applied) VALUES (\(node), \(database), \(position))
                    ON CONFLICT (node, database) DO UPDATE SET applied = excluded.applied
                    """, logger: logger)
            }
            return takenOver
        }
    }

    /// Ends `node`'s lease now (it is stopping): status shows it gone at once.
    public func leave(node: String) async throws {
        try await client.query("UPDATE hearth_node SET lease_until = now() WHERE id = \(node)", logger: logger)
    }

    /// Every node, with its lease, positions and lag, in ID order.
    public func status() async throws -> [Status] {
        var nodes: [String: Status] = [:]
        let rows = try await client.query(
            """
            SELECT id, address, lease_until > now(), EXTRACT(EPOCH FROM now() - heartbeat_at)::float8, taken_over_by
            FROM hearth_node
            """, logger: logger)
        for try await (id, address, alive, silent, takenOver) in rows.decode((String, String, Bool, Double, String?).self) {
            nodes[id] = Status(id: id, address: address, alive: alive, silentSeconds: silent, applied: [:], lag: [:], takenOverBy: takenOver)
        }
        let positions = try await client.query(
            """
            SELECT p.node, p.database, p.applied, COALESCE(h.sequence, 0)
            FROM hearth_node_position p LEFT JOIN hearth_log_head h ON h.database = p.database
            """, logger: logger)
        for try await (node, database, applied, head) in positions.decode((String, String, Int64, Int64).self) {
            nodes[node]?.applied[database] = applied
            nodes[node]?.lag[database] = max(head - applied, 0)
        }
        return nodes.values.sorted { $0.id < $1.id }
    }
}
