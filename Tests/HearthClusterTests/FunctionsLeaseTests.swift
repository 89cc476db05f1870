import HearthCluster
import HearthTesting
import Synchronization
import Testing

/// One node at a time holds the functions lease; it renews it; another takes it once it ran out
/// or was released; and the loop tells its node when it gained and lost it.
@Suite(.serialized) struct FunctionsLeaseTests {
    static func lease(_ log: ClusterLog, node: String, seconds: Int) -> FunctionsLease {
        FunctionsLease(
            log: log, node: node, timing: FunctionsLease.Timing(leaseSeconds: seconds, renewInterval: .milliseconds(20)),
            logger: ClusterLogTests.logger)
    }

    @Test func oneNodeHoldsTheLeaseUntilItRunsOutOrIsReleased() async throws {
        try await TestPostgres.withClients(2) { clients in
            let logs = clients.map { ClusterLog(client: $0, operationTimeout: ClusterLogTests.testOperationTimeout, logger: ClusterLogTests.logger) }
            try await FunctionsLease.prepare(on: clients[0], logger: ClusterLogTests.logger)
            let a = Self.lease(logs[0], node: "a", seconds: 60)
            let b = Self.lease(logs[1], node: "b", seconds: 60)
            #expect(try await a.acquire())
            #expect(try await !b.acquire())
            #expect(try await a.acquire())  // renewed
            #expect(try await b.holder() == "a")
            try await a.release()
            #expect(try await b.acquire())
            #expect(try await !a.acquire())
            // A lease of 0 seconds has run out as soon as it is taken: anyone takes it.
            let quick = Self.lease(logs[1], node: "b", seconds: 0)
            #expect(try await quick.acquire())
            #expect(try await a.acquire())
        }
    }

    @Test func theLoopTellsItsNodeWhenItGainsAndLosesTheLease() async throws {
        try await TestPostgres.withClients(2) { clients in
            let logs = clients.map { ClusterLog(client: $0, operationTimeout: ClusterLogTests.testOperationTimeout, logger: ClusterLogTests.logger) }
            try await FunctionsLease.prepare(on: clients[0], logger: ClusterLogTests.logger)
            let other = Self.lease(logs[1], node: "other", seconds: 60)
            #expect(try await other.acquire())
            let (changes, change) = AsyncStream<Bool>.makeStream()
            let mine = Self.lease(logs[0], node: "mine", seconds: 60)
            let loop = Task { await mine.run { change.yield($0) } }
            var told = changes.makeAsyncIterator()
            // The other node leaves: this one takes over.
            try await other.release()
            #expect(await told.next() == true)
            #expect(try await other.holder() == "mine")
            // Stopping hands it back at once.
            loop.cancel()
            #expect(await told.next() == false)
            await loop.value
            #expect(try await other.acquire())
        }
    }
}
