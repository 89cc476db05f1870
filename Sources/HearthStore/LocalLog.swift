import Dispatch
import Foundation
import HearthCore
import HearthOutbox
import Logging

/// A single node's log: the database's own SQLite files (``WriteLog``) in its folder.
///
/// The writer is the log's only writer, so a batch is appended exactly as taken, numbered after
/// the last record. Batches are committed on `commitQueue`, one at a time, each in one SQLite
/// transaction holding every write that arrived while the previous one committed (group
/// commit): a blocking fsync never runs on the cooperative pool. Settings live in a table beside
/// the log, snapshots in a second file written on `snapshotQueue`, so that writing one never
/// holds up a commit.
///
/// When a commit fails (a full disk, an I/O error), the batch and everything queued behind it
/// are refused with `unavailable`, and new writes are refused for
/// ``DatabaseOptions/storageRetryInterval``; then the next write tries the disk again, so
/// writes resume by themselves once it works.
///
/// Threading: the queues are serial; the state is the writer's (under its lock) and SQLite's.
final class LocalLog: DatabaseLog {
    let file: WriteLog
    let commitQueue: DispatchQueue
    let snapshotQueue: DispatchQueue
    let outbox: (any EventOutbox)?

    private init(file: WriteLog, name: String) {
        self.file = file
        outbox = SQLiteOutbox(source: "database/\(name)", writer: file.queue, reader: file.outboxReader)
        commitQueue = DispatchQueue(label: "hearth.commit.\(name)")
        snapshotQueue = DispatchQueue(label: "hearth.snapshot.\(name)", qos: .utility)
    }

    /// Opens (or creates) the log in `folder` and reads it: the newest snapshot, the records
    /// after it, and the settings.
    static func open(folder: URL, name: String) throws -> (LocalLog, Database.Opened) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = try WriteLog(folder: folder)
        var opened = Database.Opened(state: DatabaseState(), position: 0, settings: try file.settings())
        if let snapshot = try file.newestSnapshot() {
            opened.state = DatabaseState(root: try JSONParser.parse(snapshot.bytes).node)
            opened.position = snapshot.sequence
            opened.snapshots.lastBytes = snapshot.bytes.count
        }
        try file.forEachRecord(after: opened.position) { record in
            opened.state = opened.state.applying(try record.write())
            opened.position = record.sequence
            opened.snapshots.records += 1
            opened.snapshots.bytes += record.data.count
        }
        return (LocalLog(file: file, name: name), opened)
    }

    // MARK: - Commits

    func startDraining(_ database: Database) {
        commitQueue.async { self.commit(database) }
    }

    /// Commits batches until none is waiting. Runs on `commitQueue` only.
    private func commit(_ database: Database) {
        while let batch = database.takeBatch(maxRecords: .max, maxBytes: .max) {
            guard let last = batch.records.last else {
                // Refusals only: nothing to log.
                database.finishInFlight(last: batch.after, bytes: 0)
                continue
            }
            do {
                let started = ContinuousClock.now
                try file.append(batch.records, events: batch.events, at: database.options.clock())
                database.options.onCommit?(database.name, batch.records.count, ContinuousClock.now - started)
            } catch {
                database.logger.critical("write log commit failed; refusing writes until storage works again", metadata: [
                    "database": "\(database.name)", "error": "\(error)",
                ])
                database.failWrites(
                    with: HearthError(.unavailable, "The database is unavailable: its storage failed. Try again later."),
                    retryAfter: database.options.storageRetryInterval)
                return
            }
            database.finishInFlight(last: last.sequence, bytes: batch.bytes)
        }
    }

    // MARK: - Settings

    func storeSetting(named name: String, to value: String, in database: Database) async throws {
        try file.setSetting(named: name, to: value) { database.settingStored(named: name, value: value) }
        database.publishSettings([name])
    }

    // MARK: - Snapshots

    func takeSnapshot(of database: Database) {
        snapshotQueue.async { self.writeSnapshot(of: database) }
    }

    func snapshotNow(of database: Database) {
        if database.beginSnapshot() {
            snapshotQueue.sync { writeSnapshot(of: database) }
        } else {
            snapshotQueue.sync {}
        }
    }

    /// Streams the published version into the snapshot file and compacts the log behind it.
    /// Runs on `snapshotQueue`, with the writer's snapshot marked running.
    private func writeSnapshot(of database: Database) {
        let version = database.current
        do {
            let bytes = try file.storeSnapshot(
                of: version.state.root, sequence: version.sequence, createdAt: database.options.clock(),
                history: database.options.history)
            // Writes logged while the snapshot ran still count towards the next one.
            database.snapshotFinished(covering: version.sequence, bytes: bytes)
            database.logger.debug("snapshot written", metadata: ["database": "\(database.name)", "sequence": "\(version.sequence)"])
        } catch {
            database.snapshotFailed()
            database.logger.error("snapshot failed", metadata: ["database": "\(database.name)", "error": "\(error)"])
        }
    }

    func storeSharedSnapshot(of database: Database, force: Bool) async throws -> Bool { false }

    // MARK: - Following (nothing to follow)

    func run(_ database: Database) async {}

    func wake() {}

    func appliedPosition(of database: Database) -> Int64? { nil }

    // MARK: - Closing

    func close(_ database: Database) {
        // The next open of the same folder is another instance, the only writer: a write
        // through a reference kept past this is refused.
        database.closeWriter(refusing: HearthError(.unavailable, "The database was closed while idle. Try again."))
        commitQueue.sync {}
        if database.recordsSinceSnapshot > 0 { snapshotNow(of: database) }
        snapshotQueue.sync {}
    }

    func settle() {
        commitQueue.sync {}
        snapshotQueue.sync {}
        commitQueue.sync {}
    }
}
