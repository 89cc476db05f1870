import Foundation
import HearthCluster
import HearthCore
import HearthStore
import HearthTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

/// Databases as replicas of the cluster's log, against a real PostgreSQL: each test runs
/// several replicas of one database, as separate nodes would (a connection pool and a log
/// client each), with their replication tasks running.
@Suite(.serialized) struct ReplicaDatabaseTests {
    /// Runs `body` with `count` replicas of the database `db` on a new PostgreSQL.
    static func withReplicas(
        _ count: Int, options: DatabaseOptions = DatabaseOptions(),
        _ body: (_ replicas: [Database], _ logs: [ClusterLog]) async throws -> Void
    ) async throws {
        try await TestPostgres.withClients(count) { clients in
            try await withThrowingDiscardingTaskGroup { group in
                let logs = clients.enumerated().map { ClusterLog(
                    client: $1, node: "n\($0)", operationTimeout: ClusterLogTests.testOperationTimeout, logger: ClusterLogTests.logger) }
                for log in logs { try await log.prepare() }
                var replicas: [Database] = []
                for log in logs {
                    let replica = try await Database.replica(name: "db", log: log, options: options, logger: ClusterLogTests.logger)
                    group.addTask { await replica.runReplication() }
                    replicas.append(replica)
                }
                try await body(replicas, logs)
                for replica in replicas { replica.close() }
                group.cancelAll()
            }
        }
    }

    /// Waits until `replica` has applied the log up to `position` (woken by its commit observer).
    static func waitUntil(_ replica: Database, applied position: Int64) async {
        let (versions, next) = AsyncStream<Int64>.makeStream()
        replica.events.subscribe { _, event in
            if case .committed(_, let version) = event { next.yield(version.sequence) }
        }
        replica.poke()
        if (replica.appliedPosition ?? 0) >= position { return }
        for await sequence in versions where sequence >= position { return }
    }

    /// Every ``DatabaseBehaviour`` (the checks a single node's database passes), on a replica
    /// of a new shared log with its replication task running.
    @Test(arguments: DatabaseBehaviour.allCases)
    func behaviour(_ behaviour: DatabaseBehaviour) async throws {
        try await Self.withReplicas(1) { replicas, _ in try await behaviour.check(replicas[0]) }
    }

    static func parsed(_ json: String) throws -> JSONParser.Parsed {
        try JSONParser.parse(Array(json.utf8))
    }

    @Test func writesOnEveryReplicaReachEveryReplicaInOneOrder() async throws {
        try await Self.withReplicas(3) { replicas, _ in
            let seen = Mutex<[[Int64]]>([[], [], []])
            for (index, replica) in replicas.enumerated() {
                replica.events.subscribe { _, event in
                    if case .committed(let committed, _) = event { seen.withLock { $0[index] += committed.map(\.sequence) } }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, replica) in replicas.enumerated() {
                    group.addTask {
                        for item in 0..<20 {
                            try await replica.write(.set(try Path(parsing: "/last"), try Self.parsed("\"n\(index)-\(item)\"")))
                        }
                    }
                }
                try await group.waitForAll()
            }
            for replica in replicas { await Self.waitUntil(replica, applied: 60) }
            let values = replicas.map { $0.value(at: .root) }
            #expect(values[0] == values[1] && values[1] == values[2])
            // Every replica saw every sequence once, in order.
            for index in 0..<3 { #expect(seen.withLock { $0[index] } == Array(1...60)) }
        }
    }

    /// Two nodes make the same conditional write (a transaction on the same value): exactly one
    /// holds, the other is refused after the first's data reached it.
    @Test func aConditionHoldsForExactlyOneOfTwoNodes() async throws {
        try await Self.withReplicas(2) { replicas, _ in
            let counter = try Path(parsing: "/counter")
            let first = try await replicas[0].write(.set(counter, try Self.parsed("1")))
            await Self.waitUntil(replicas[1], applied: first.sequence)
            let expected = Node.int(1).hash
            let condition: @Sendable (DatabaseState) throws -> Void = { state in
                guard state.value(at: counter).hash == expected else { throw HearthError(.preconditionFailed, "stale") }
            }
            let held = try await withThrowingTaskGroup(of: Bool.self) { group in
                for replica in replicas {
                    group.addTask {
                        do {
                            try await replica.write(.set(counter, try Self.parsed("2")), precondition: condition)
                            return true
                        } catch let error as HearthError {
                            #expect(error.code == .preconditionFailed)
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(held == 1)
            for replica in replicas { await Self.waitUntil(replica, applied: 2) }
            #expect(replicas.map { $0.value(at: counter) } == [.int(2), .int(2)])
        }
    }

    /// A check that reads other data (as rules do) is judged against every write ordered
    /// before it, even one this node had not seen when the write arrived.
    @Test func aCheckIsRepeatedOnTopOfAnotherNodesNewerWrite() async throws {
        try await Self.withReplicas(2) { replicas, logs in
            let locked = try Path(parsing: "/locked")
            // Node 1 locks, straight into the log, so node 0 has surely not applied it yet.
            let record = LogRecord(sequence: 0, write: .set(locked, .bool(true)))
            #expect(try await logs[1].append(database: "db", after: 0, records: [record], events: []) == .appended(last: 1))
            let authorize: Database.Authorization = { before, _, _, _ in
                if before.value(at: locked) == .bool(true) { throw HearthError(.permissionDenied, "Permission denied") }
            }
            #expect(replicas[0].appliedPosition == 0 || replicas[0].value(at: locked) == .bool(true))
            await #expect(throws: HearthError.self) {
                try await replicas[0].write(.set(try Path(parsing: "/note"), try Self.parsed("\"sneaked\"")), authorize: authorize)
            }
            #expect(replicas[0].value(at: try Path(parsing: "/note")) == .null)
            #expect(try await logs[0].latest(database: "db") == 1)
        }
    }

    /// A setting (the rules) goes through the log: every replica applies it and tells its
    /// observers.
    @Test func settingsReachEveryReplica() async throws {
        try await Self.withReplicas(2) { replicas, _ in
            let (changed, change) = AsyncStream<String>.makeStream()
            replicas[1].events.subscribe { _, event in
                if case .settingChanged(let name) = event { change.yield(name) }
            }
            try await replicas[0].setSetting(named: "rules", to: #"{"rules": {}}"#)
            #expect(try replicas[0].setting(named: "rules") == #"{"rules": {}}"#)
            replicas[1].poke()
            var names = changed.makeAsyncIterator()
            #expect(await names.next() == "rules")
            #expect(try replicas[1].setting(named: "rules") == #"{"rules": {}}"#)
        }
    }

    /// Snapshots: one node stores one at a time; the next drops the log up to the previous
    /// one; a replica opened later starts from it; one that fell behind the compacted log
    /// resyncs from it and its listeners get the whole tree at once.
    @Test func snapshotsCompactTheLogAndLetReplicasResync() async throws {
        try await Self.withReplicas(2) { replicas, logs in
            let items = try Path(parsing: "/items")
            for index in 1...5 { try await replicas[0].write(.set(items.child(ChildKey("i\(index)")), try Self.parsed("\(index)"))) }
            #expect(try await replicas[0].storeSharedSnapshot())
            // A snapshot no newer than the stored one is refused.
            await Self.waitUntil(replicas[1], applied: 5)
            #expect(try await replicas[1].storeSharedSnapshot() == false)
            for index in 6...8 { try await replicas[0].write(.set(items.child(ChildKey("i\(index)")), try Self.parsed("\(index)"))) }
            #expect(try await replicas[0].storeSharedSnapshot())
            // The log up to the first snapshot (5) is gone; from there on it is kept.
            #expect(try await logs[0].entries(database: "db", after: 0).map(\.sequence) == [6, 7, 8])

            let late = try await Database.replica(name: "db", log: logs[1], logger: ClusterLogTests.logger)
            #expect(late.appliedPosition == 8)
            #expect(late.value(at: items) == replicas[0].value(at: items))

            // A replica at 0 whose next records were compacted: it starts over from the snapshot.
            let behind = try await Database.replica(name: "other", log: logs[1], logger: ClusterLogTests.logger)
            let (wholes, whole) = AsyncStream<ResolvedWrite>.makeStream()
            behind.events.subscribe { _, event in
                if case .committed(let committed, _) = event { for entry in committed { whole.yield(entry.write) } }
            }
            let records = (1...3).map { LogRecord(sequence: 0, write: .set(try! Path(parsing: "/x\($0)"), .int(Int64($0)))) }
            #expect(try await logs[0].append(database: "other", after: 0, records: records, events: []) == .appended(last: 3))
            let source = try await Database.replica(name: "other", log: logs[0], logger: ClusterLogTests.logger)
            #expect(try await source.storeSharedSnapshot())
            try await logs[0].append(database: "other", after: 3, records: [LogRecord(sequence: 0, write: .set(try Path(parsing: "/x4"), .int(4)))], events: [])
            #expect(try await source.storeSharedSnapshot() == false)  // not newer than what it holds
            let source2 = try await Database.replica(name: "other", log: logs[0], logger: ClusterLogTests.logger)
            #expect(try await source2.storeSharedSnapshot())  // at 4: drops 1...3
            let replication = Task { await behind.runReplication() }
            behind.poke()
            var writes = wholes.makeAsyncIterator()
            let first = await writes.next()
            if case .set(let path, let value) = first {
                #expect(path == .root)
                #expect(value.child(ChildKey("x4")) == .int(4))
            } else {
                Issue.record("the resync did not report the whole tree: \(String(describing: first))")
            }
            #expect(behind.appliedPosition == 4)
            behind.close()
            replication.cancel()
        }
    }
}
