import Foundation
import HearthCluster
import HearthCore
import HearthOutbox
import HearthStore
import Synchronization
import Testing

/// The events of a replica's writes are appended with their records, in the same PostgreSQL
/// transaction: exactly one per committed write, in log order, none for a refused write, and
/// none twice for a write checked again after another node's append came first.
@Suite(.serialized) struct ReplicaEventTests {
    /// One event per write checked, for the subscriber "fn", carrying the write's record (path
    /// and data) and a new ID each check: a write recorded at two checks would show twice.
    struct RecordEachWrite: CommitEventRecorder {
        func events(
            database: String, write: ResolvedWrite, origin: WriteOrigin, before: DatabaseState, after: DatabaseState, time: Int64
        ) -> [OutboxEvent] {
            let record = LogRecord(sequence: 0, write: write)
            return [OutboxEvent(subscriber: "fn", id: UUID().uuidString, body: Array("\(record.path)|".utf8) + record.data, time: time)]
        }
    }

    @Test func everyCommittedWriteRecordsOneEventInLogOrderWhenNodesRace() async throws {
        var options = DatabaseOptions()
        options.eventRecorder = RecordEachWrite()
        try await ReplicaDatabaseTests.withReplicas(2, options: options) { replicas, logs in
            let counter = try Path(parsing: "/counter")
            try await replicas[0].write(.set(counter, .int(1)))
            await ReplicaDatabaseTests.waitUntil(replicas[1], applied: 1)
            let expected = Node.int(1).hash
            let condition: @Sendable (DatabaseState) throws -> Void = { state in
                guard state.value(at: counter).hash == expected else { throw HearthError(.preconditionFailed, "stale") }
            }
            // Both nodes write at once (their appends race, so some batches are checked again
            // holding the head), and both try one conditional write that only one may make.
            let held = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, replica) in replicas.enumerated() {
                    group.addTask {
                        for item in 0..<20 {
                            try await replica.write(.set(try Path(parsing: "/last"), .string("n\(index)-\(item)")))
                        }
                        return 0
                    }
                    group.addTask {
                        do {
                            try await replica.write(.set(counter, .int(2)), precondition: condition)
                            return 1
                        } catch let error as HearthError where error.code == .preconditionFailed {
                            return 0
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(held == 1)
            let log = try await logs[0].entries(database: "db", after: 0)
            #expect(log.count == 42)
            let outbox = replicas[1].outbox!
            #expect(outbox.source == "database/db")
            let events = try await outbox.pending(for: "fn", after: 0, limit: 100)
            #expect(events.map { String(decoding: $0.event.body, as: UTF8.self) }
                == log.map { "\($0.path)|" + String(decoding: $0.data, as: UTF8.self) })
            #expect(Set(events.map(\.event.id)).count == 42)
        }
    }
}
