import GRDB
@testable import HearthStore
import HearthTesting
import Testing

/// A write is on disk before it is acknowledged: SQLite syncs the log at every commit.
@Suite("Write log sync")
struct WriteLogSyncTests {
    /// synchronous = FULL (2) on the log and the snapshots: GRDB's WAL set-up would leave NORMAL
    /// (1), which syncs only at checkpoints, so an acknowledged write could be lost with the
    /// machine's power.
    @Test func theLogAndSnapshotsSyncAtEveryCommit() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let log = try #require(database.log as? LocalLog).file
        #expect(try log.queue.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
        #expect(try log.snapshots.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
        #expect(try log.queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }
}
