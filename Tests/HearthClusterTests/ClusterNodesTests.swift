import Foundation
import HearthCluster
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

    /// A node whose lease ran out is taken over by exactly one of the nodes that ask at once;
    /// a live one by none; and a node that comes back starts afresh.
    @Test func anExpiredNodeIsTakenOverOnce() async throws {
        try await ClusterLogTests.withLogs(nodes: 3) { (logs: [ClusterLog]) async throws in
            let nodes = logs.map { $0.nodes() }
            for registry in nodes { try await registry.prepare() }
            try await nodes[0].heartbeat(node: "dead", address: "a", leaseSeconds: 0, applied: [:])
            try await nodes[1].heartbeat(node: "alive", address: "b", leaseSeconds: 60, applied: [:])
            let claims = try await withThrowingTaskGroup(of: [String].self) { group in
                for (index, registry) in nodes.enumerated() {
                    group.addTask { try await registry.takeOverExpired(by: "claimer\(index)") }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(claims == ["dead"])
            let dead = try #require(try await nodes[0].status().first { $0.id == "dead" })
            #expect(!dead.alive && dead.takenOverBy?.hasPrefix("claimer") == true)
            #expect(try await nodes[2].takeOverExpired(by: "late").isEmpty)
            try await nodes[0].heartbeat(node: "dead", address: "a", leaseSeconds: 60, applied: [:])
            let back = try #require(try await nodes[0].status().first { $0.id == "dead" })
            #expect(back.alive && back.takenOverBy == nil)
        }
    }
}
