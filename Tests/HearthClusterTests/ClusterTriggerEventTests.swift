import Foundation
import HearthAuth
import HearthCluster
import HearthCore
import HearthFiles
import HearthFunctions
import HearthOutbox
import HearthTesting
import Synchronization
import Testing

/// A cluster's accounts and files record their triggers' events in the cluster's outbox, in the
/// transactions that change them: one event per account made or deleted and per file change,
/// none for refused changes, and the recorder told once they committed.
@Suite(.serialized) struct ClusterTriggerEventTests {
    /// Counts what the recorder was told.
    final class Committed: Sendable {
        let count = Mutex(0)
    }

    static func ids() -> @Sendable () -> String {
        let next = Mutex(0)
        return { "event-\(next.withLock { $0 += 1; return $0 })" }
    }

    static func types(_ outbox: PostgresOutbox, _ function: String) async throws -> [String] {
        try await outbox.pending(for: function, after: 0, limit: 100).map { try CloudEvent(structured: $0.event.body).type }
    }

    @Test func accountsMadeAndDeletedRecordTheirEvents() async throws {
        try await TestPostgres.withClients(1) { clients in
            let recorder = AccountTriggerRecorder(
                subscriptions: [.init(function: "made", trigger: AccountTrigger(change: .created)),
                                .init(function: "gone", trigger: AccountTrigger(change: .deleted))],
                projectID: "proj", backlog: EventBacklog(limit: 100), makeID: Self.ids(), now: { 5 })
            let committed = Committed()
            recorder.signal.whenCommitted { committed.count.withLock { $0 += 1 } }
            let store = PostgresAccountStore(client: clients[0], recorder: recorder, logger: ClusterLogTests.logger)
            try await store.prepare()
            try await PostgresOutbox.prepare(on: clients[0], logger: ClusterLogTests.logger)
            let outbox = PostgresOutbox(source: PostgresAccountStore.outboxSource, client: clients[0], logger: ClusterLogTests.logger)
            var user = UserRecord(uid: "u1", email: "ada@example.com", provider: "password", createdAt: 1, validSince: 0)
            try await store.insert(user)
            // A refused insert (the address is taken) records nothing.
            user.uid = "u2"
            await #expect(throws: AuthError.emailExists) { try await store.insert(user) }
            #expect(try await Self.types(outbox, "made") == ["google.firebase.auth.user.v1.created"])
            #expect(try await store.delete(uid: "u1"))
            #expect(try await store.delete(uid: "u1") == false)
            let gone = try await outbox.pending(for: "gone", after: 0, limit: 10)
            #expect(gone.count == 1)
            #expect(try CloudEvent(structured: gone[0].event.body).subject == "users/u1")
            #expect(committed.count.withLock { $0 } == 2)
        }
    }

    @Test func fileChangesRecordTheirEvents() async throws {
        try await TestPostgres.withClients(1) { clients in
            let recorder = StorageEventRecorder(
                subscriptions: [.init(function: "onfile", trigger: StorageTrigger(change: .finalized, bucket: "b")),
                                .init(function: "ongone", trigger: StorageTrigger(change: .deleted, bucket: "b"))],
                base: "http://127.0.0.1", backlog: EventBacklog(limit: 100), makeID: Self.ids(), now: { 5 })
            let metadata = PostgresFileMetadata(client: clients[0], recorder: recorder, logger: ClusterLogTests.logger)
            try await metadata.prepare()
            try await PostgresOutbox.prepare(on: clients[0], logger: ClusterLogTests.logger)
            let outbox = PostgresOutbox(source: PostgresFileMetadata.outboxSource, client: clients[0], logger: ClusterLogTests.logger)
            let object = StoredObject(
                bucket: "b", name: "a.txt", size: 1, contentType: "text/plain", md5Hash: "x", generation: 1, timeCreated: 1, updated: 1,
                blob: "blob-1")
            _ = try await metadata.put(object)
            _ = try await metadata.put(object)  // new content: the old generation deleted, the new one finalized
            _ = try await metadata.delete(bucket: "b", name: "a.txt") { _ in }
            await #expect(throws: FilesError.self) { _ = try await metadata.delete(bucket: "b", name: "a.txt") { _ in } }
            #expect(try await Self.types(outbox, "onfile") == Array(repeating: "google.cloud.storage.object.v1.finalized", count: 2))
            #expect(try await Self.types(outbox, "ongone") == Array(repeating: "google.cloud.storage.object.v1.deleted", count: 2))
        }
    }
}
