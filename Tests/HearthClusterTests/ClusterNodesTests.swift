import Foundation
import HearthCluster
import HearthStore
import HearthTesting
import PostgresNIO
import Testing

/// Node leases, positions and takeover against a real PostgreSQL.
@Suite(.serialized) struct ClusterNodesTests {
    @Test func statusShowsLeasesPositionsAndLag() async throws {
        try await ClusterLogTests.withLogs(nodes: 2) { (logs: [ClusterLog]) async throws in
            let nodes = logs.map { $0.nodes() }
            for registry in nodes { try await registry.prepare() }
            _ = try await logs[0].append(database: "d", after: 0, records: (0..<5).map { ClusterLogTests.record("\($0)") }, node: "a")
            try await nodes[0].heartbeat(node: "a", address: "10.0.0.1:9000", leaseSeconds: 30, applied: ["d": 5])
            try await nodes[1].heartbeat(node: "b", address: "10.0.0.2:9000", leaseSeconds: 30, applied: ["d": 3])
            let status = try await nodes[0].status()
            #expect(status.map(\.id) == ["a", "b"])
            #expect(status.allSatisfy { $0.alive })
            #expect(status[0].applied == ["d": 5] && status[0].lag == ["d": 0])
            #expect(status[1].applied == ["d": 3] && status[1].lag == ["d": 2])
            #expect(status[1].address == "10.0.0.2:9000")
        }
    }

    /// A node whose lease ran out is taken over by exactly one of the nodes that ask at once,
    /// which gets every onDisconnect operation it had; a live one by none; and a node that
    /// comes back learns it was taken over and starts afresh.
    @Test func anExpiredNodeIsTakenOverOnceWithItsOperations() async throws {
        try await ClusterLogTests.withLogs(nodes: 3) { (logs: [ClusterLog]) async throws in
            let nodes = logs.map { $0.nodes() }
            for registry in nodes { try await registry.prepare() }
            let queues = logs.enumerated().map { ClusterDisconnects(client: $1.client, node: "claimer\($0)", logger: ClusterLogTests.logger) }
            for queue in queues { try await queue.prepare() }
            let deadQueue = ClusterDisconnects(client: logs[0].client, node: "dead", logger: ClusterLogTests.logger)
            for position in 0..<3 {
                try await deadQueue.add(DisconnectQueueStore.Record(
                    session: "s1", position: Int64(position), database: "d", kind: "set", path: "/p\(position)",
                    data: Array("true".utf8)))
            }
            try await nodes[0].heartbeat(node: "dead", address: "a", leaseSeconds: 0, applied: [:])
            try await nodes[1].heartbeat(node: "alive", address: "b", leaseSeconds: 60, applied: [:])
            let claims = try await withThrowingTaskGroup(of: [(node: String, records: [DisconnectQueueStore.Record])].self) { group in
                for queue in queues {
                    group.addTask { try await queue.takeOverExpired(by: queue.node) }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claims.map(\.node) == ["dead"])
            #expect(claims.first?.records.map(\.path) == ["/p0", "/p1", "/p2"])
            let dead = try #require(try await nodes[0].status().first { $0.id == "dead" })
            #expect(!dead.alive && dead.takenOverBy?.hasPrefix("claimer") == true)
            #expect(try await queues[2].takeOverExpired(by: "late").isEmpty)
            #expect(try await deadQueue.all().isEmpty)
            // The node comes back: it hears it was taken over, and is alive again.
            #expect(try await nodes[0].heartbeat(node: "dead", address: "a", leaseSeconds: 60, applied: [:]))
            let back = try #require(try await nodes[0].status().first { $0.id == "dead" })
            #expect(back.alive && back.takenOverBy == nil)
            #expect(try await nodes[0].heartbeat(node: "dead", address: "a", leaseSeconds: 60, applied: [:]) == false)
        }
    }

    /// A session that ended claims its own operations; one claimed already (taken over) gives none.
    @Test func anEndedSessionClaimsItsOperationsOnce() async throws {
        try await ClusterLogTests.withLogs(nodes: 1) { (logs: [ClusterLog]) async throws in
            let queue = ClusterDisconnects(client: logs[0].client, node: "n", logger: ClusterLogTests.logger)
            try await queue.prepare()
            let record = DisconnectQueueStore.Record(
                session: "s", position: 0, database: "d", kind: "set", path: "/x", data: Array("1".utf8))
            try await queue.add(record)
            #expect(try await queue.claim(session: "s", known: [record]) == [record])
            #expect(try await queue.claim(session: "s", known: [record]).isEmpty)
        }
    }
}
