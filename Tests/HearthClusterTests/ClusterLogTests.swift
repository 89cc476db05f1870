import Foundation
import HearthCluster
import HearthTesting
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// The cluster's shared log against a real PostgreSQL (a throwaway server per test, from
/// Debian's postgresql package, which scripts/test installs). `CLUSTER_TEST_LOG=1` shows the
/// client's log.
@Suite(.serialized) struct ClusterLogTests {
    static let logger: Logger = {
        var logger = Logger(label: "cluster-tests", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = ProcessInfo.processInfo.environment["CLUSTER_TEST_LOG"] == nil ? .critical : .debug
        return logger
    }()

    /// Runs `body` with `nodes` clients (one pool each, as separate nodes would have) on a new
    /// PostgreSQL, each log prepared.
    ///
    /// The logs' deadline is long: it only bounds a failure, and a CI run that builds and tests
    /// side by side on two cores has stalled the test process for minutes (the 5 s default
    /// then refused writes as "the cluster's log cannot be reached").
    static let testOperationTimeout: Duration = .seconds(300)

    static func withLogs(nodes: Int = 1, _ body: ([ClusterLog]) async throws -> Void) async throws {
        try await TestPostgres.withClients(nodes, logger: logger) { clients in
            let logs = clients.map { ClusterLog(client: $0, operationTimeout: testOperationTimeout, logger: logger) }
            for log in logs { try await log.prepare() }
            try await body(logs)
        }
    }

    static func record(_ text: String) -> ClusterLog.Record {
        ClusterLog.Record(kind: "set", path: "/items/\(text)", data: Array("\"\(text)\"".utf8))
    }

    @Test func appendsFollowThePositionTheNodeApplied() async throws {
        try await Self.withLogs { logs in
            let log = logs[0]
            #expect(try await log.latest(database: "a") == 0)
            #expect(try await log.append(database: "a", after: 0, records: [Self.record("x"), Self.record("y")], node: "n1") == .appended(last: 2))
            // A node that has not seen 1 and 2 is told how far the log is, and nothing is written.
            #expect(try await log.append(database: "a", after: 0, records: [Self.record("z")], node: "n2") == .behind(latest: 2))
            #expect(try await log.append(database: "a", after: 2, records: [Self.record("z")], node: "n2") == .appended(last: 3))
            let entries = try await log.entries(database: "a", after: 0)
            #expect(entries.map(\.sequence) == [1, 2, 3])
            #expect(entries.map(\.path) == ["/items/x", "/items/y", "/items/z"])
            #expect(entries.map(\.node) == ["n1", "n1", "n2"])
            #expect(entries[2].data == Array("\"z\"".utf8))
            // Databases have logs of their own.
            #expect(try await log.latest(database: "b") == 0)
            #expect(try await log.entries(database: "a", after: 2).map(\.sequence) == [3])
        }
    }

    /// A database exists in a cluster once it has a log (what lets someone who is not an admin
    /// open it); looking at its head creates nothing.
    @Test func aDatabaseExistsOnceItHasALog() async throws {
        try await Self.withLogs { (logs: [ClusterLog]) async throws in
            let log = logs[0]
            #expect(try await log.databaseExists(named: "a") == false)
            #expect(try await log.latest(database: "a") == 0)
            #expect(try await log.databaseExists(named: "a") == false)
            #expect(try await log.append(database: "a", after: 0, records: [Self.record("x")], node: "n1") == .appended(last: 1))
            #expect(try await log.databaseExists(named: "a"))
            #expect(try await log.databaseExists(named: "b") == false)
        }
    }

    /// Three nodes append at once, each catching up and retrying when another got there first:
    /// every record lands once, in one gapless order that every node reads the same.
    @Test func concurrentNodesGetOneGaplessOrder() async throws {
        try await Self.withLogs(nodes: 3) { logs in
            let perNode = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, log) in logs.enumerated() {
                    group.addTask {
                        var position: Int64 = 0
                        for item in 0..<perNode {
                            while true {
                                switch try await log.append(
                                    database: "shared", after: position, records: [Self.record("n\(index)-\(item)")], node: "n\(index)")
                                {
                                case .appended(let last):
                                    position = last
                                case .behind(let latest):
                                    position = latest  // a real node applies what it missed here, then checks again
                                    continue
                                }
                                break
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = Int64(3 * perNode)
            var orders: [[String]] = []
            for log in logs {
                let entries = try await log.entries(database: "shared", after: 0, limit: 1000)
                #expect(entries.map(\.sequence) == Array(1...total))
                orders.append(entries.map(\.path))
            }
            #expect(Set(orders[0]).count == Int(total))
            #expect(orders[0] == orders[1] && orders[1] == orders[2])
        }
    }

    /// An append wakes the nodes that listen, with the database and its last sequence.
    @Test func appendsAreAnnounced() async throws {
        try await Self.withLogs(nodes: 2) { (logs: [ClusterLog]) async throws in
            let (listening, listeningNow) = AsyncStream<Void>.makeStream()
            let (heard, hear) = AsyncStream<String>.makeStream()
            let listener = Task {
                try await logs[1].announcements(listening: { listeningNow.yield() }) { database, sequence in
                    hear.yield("\(database) \(sequence)")
                }
            }
            defer { listener.cancel() }
            var ready = listening.makeAsyncIterator()
            _ = await ready.next()
            #expect(try await logs[0].append(database: "c", after: 0, records: [Self.record("p")], node: "n0") == .appended(last: 1))
            #expect(try await logs[0].append(database: "c", after: 1, records: [Self.record("q"), Self.record("r")], node: "n0")
                == .appended(last: 3))
            var announcements = heard.makeAsyncIterator()
            #expect(await announcements.next() == "c 1")
            #expect(await announcements.next() == "c 3")
        }
    }
}
