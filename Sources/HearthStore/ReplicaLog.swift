import Foundation
import HearthCore
import HearthOutbox
import Logging
import Synchronization

/// A cluster node's log: the ``SharedLog`` every node appends to and follows (HearthCluster
/// keeps it in PostgreSQL), so every node applies the same writes in the same order. The node
/// keeps no log of its own; its state is the shared log applied up to the writer's position.
///
/// One replication task (``run(_:)``, started by the cluster's service) appends this node's
/// batches after the position it has applied and applies everyone's records; it alone moves
/// the writer's position, so events are delivered in log order. When another node's append
/// came first, the records it missed are applied and the batch is checked again on top (the
/// writer's `applyLogged`) before it is appended, this time holding the log's head. A write
/// completes after PostgreSQL committed it and this node applied it (read-your-writes on the
/// node). Settings are records in the log, applied where they are; snapshots are stored in the
/// cluster by one node at a time.
///
/// When the shared log cannot be reached, the batch and everything queued are refused with
/// `unavailable` (if PostgreSQL did commit the batch before the link failed, its records arrive
/// like any other node's), and the task tries again on the next write or poll after a short
/// pause.
///
/// Threading: `wakes` is iterated by the replication task only; `wake` may be yielded from any
/// thread (writes, announcements, polls). The state is the writer's, under its lock.
final class ReplicaLog: DatabaseLog {
    /// Records read from the shared log per query while catching up.
    static let catchUpPage = 5000
    /// The most records replayed before a replica opens (the rest is followed after).
    static let maxReplayOnOpen = 200_000
    /// The most records a node reads and applies while holding the log's head. Another node's
    /// one append can carry ``maxAppendRecords``: a smaller bound could leave a node behind a
    /// busy one catching up for ever.
    static let maxMissedUnderLock = 50_000
    /// The most records (or bytes) one append carries.
    static let maxAppendRecords = 1000
    static let maxAppendBytes = 16 << 20

    let shared: any SharedLog
    /// The database's outbox in the shared store: a batch's events are appended with its
    /// records (the ones its writes' last check made, so a batch checked again after another
    /// node's append records its new events, never the old ones too).
    let outbox: (any EventOutbox)?
    let name: String
    /// Wakes the replication task (local writes, announcements, polls).
    private let wakeUp: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    private init(shared: any SharedLog, name: String) {
        self.shared = shared
        self.name = name
        outbox = shared.outbox(database: name)
        (wakes, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Reads the database `name` from `log`: the newest snapshot there, then the records after
    /// it, a bounded number (under a busy writer the end of the log keeps moving, and the
    /// replication task follows on from wherever opening stopped).
    static func open(name: String, log: any SharedLog) async throws -> (ReplicaLog, Database.Opened) {
        var snapshot = try await loadSnapshot(name: name, log: log)
        var opened = Database.Opened(state: snapshot.state, position: snapshot.position, settings: snapshot.settings)
        while opened.snapshots.records < maxReplayOnOpen {
            let records = try await log.records(database: name, after: opened.position, limit: catchUpPage)
            guard let first = records.first else { break }
            if first.sequence != opened.position + 1 {
                // Compacted while we read: start again from the newer snapshot.
                snapshot = try await loadSnapshot(name: name, log: log)
                let replayed = opened.snapshots.records
                opened = Database.Opened(state: snapshot.state, position: snapshot.position, settings: snapshot.settings)
                opened.snapshots.records = replayed
                continue
            }
            for record in records {
                if record.kind == LogRecord.settingKind {
                    opened.settings[record.path] = String(decoding: record.data, as: UTF8.self)
                } else {
                    opened.state = opened.state.applying(try record.write())
                }
                opened.position = record.sequence
            }
            opened.snapshots.records += records.count
        }
        opened.snapshots.lastBytes = snapshot.bytes
        return (ReplicaLog(shared: log, name: name), opened)
    }

    private static func loadSnapshot(name: String, log: any SharedLog) async throws -> Database.Snapshot {
        guard let snapshot = try await log.newestSnapshot(database: name) else {
            return Database.Snapshot(state: DatabaseState(), position: 0, settings: [:], bytes: 0)
        }
        let bytes = snapshot.chunks.flatMap { $0 }
        let root = try JSONParser.parse(bytes).node
        return Database.Snapshot(state: DatabaseState(root: root), position: snapshot.sequence, settings: snapshot.settings, bytes: bytes.count)
    }

    // MARK: - Local writes

    func startDraining(_ database: Database) {
        wakeUp.yield()
    }

    func storeSetting(named name: String, to value: String, in database: Database) async throws {
        _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Database.Committed, any Error>) in
            database.enqueue(completion: { continuation.resume(with: $0) }) { _ in .setting(name: name, value: value) }
        }
    }

    func appliedPosition(of database: Database) -> Int64? {
        database.position
    }

    func wake() {
        wakeUp.yield()
    }

    // MARK: - Replication

    func run(_ database: Database) async {
        var failures = 0
        for await _ in wakes {
            do {
                try await replicate(database)
                failures = 0
            } catch {
                database.logger.warning("append to the shared log failed", metadata: ["database": "\(name)", "error": "\(error)"])
                database.failWrites(
                    with: HearthError(.unavailable, "The database is unavailable: the cluster's log cannot be reached. Try again."))
                failures += 1
                if failures == 1 || failures % 100 == 0 {
                    database.logger.error("shared log unreachable", metadata: ["database": "\(name)", "error": "\(error)"])
                }
                // The next write or poll tries again; a short pause keeps a dead link from spinning.
                try? await Task.sleep(for: .milliseconds(min(50 * failures, 1000)))
            }
            if database.isClosed { break }
        }
        database.failWrites(with: Self.stopping, closing: true)
    }

    private static let stopping = HearthError(.unavailable, "The database is unavailable: the server is stopping.")

    /// Appends local writes and applies other nodes' records until neither is waiting.
    private func replicate(_ database: Database) async throws {
        while let batch = database.takeBatch(maxRecords: Self.maxAppendRecords, maxBytes: Self.maxAppendBytes) {
            if batch.records.isEmpty {
                database.finishInFlight(last: batch.after, bytes: 0)
                continue
            }
            let started = ContinuousClock.now
            switch try await shared.append(database: name, after: batch.after, records: batch.records, events: batch.events) {
            case .appended(let last):
                database.options.onCommit?(name, batch.records.count, ContinuousClock.now - started)
                database.finishInFlight(last: last, bytes: batch.bytes)
            case .behind:
                try await appendHoldingHead(database, after: batch.after)
            }
        }
        try await catchUp(database)
    }

    /// Another node's append came first. Retrying the same way could lose again and again
    /// while busy nodes keep winning, so this time the node holds the log's head: it reads
    /// what it missed, applies it, checks its batch again on top and appends it, all before
    /// anyone else can append. (When it missed too much to do that under the lock, it catches
    /// up first and the next round tries again.)
    private func appendHoldingHead(_ database: Database, after position: Int64) async throws {
        let appended = Mutex((records: 0, bytes: 0))
        let started = ContinuousClock.now
        let last = try await shared.appendHoldingHead(database: name, after: position, missedAtMost: Self.maxMissedUnderLock) {
            missed in
            if !missed.isEmpty { try database.applyLogged(missed) }
            let batch = database.takeBatch(fromQueue: false, maxRecords: Self.maxAppendRecords, maxBytes: Self.maxAppendBytes)
            let records = batch?.records ?? []
            appended.withLock { $0 = (records.count, batch?.bytes ?? 0) }
            return (records, records.isEmpty ? [] : batch?.events ?? [])
        }
        guard let last else {
            // Far behind: catch up by a bounded amount, then the next round holds the head again.
            try await catchUp(database, atMost: Self.maxMissedUnderLock)
            return
        }
        let (records, bytes) = appended.withLock { $0 }
        if records > 0 { database.options.onCommit?(name, records, ContinuousClock.now - started) }
        database.finishInFlight(last: last, bytes: bytes)
    }

    /// Reads and applies every record after this node's position; starts again from the newest
    /// snapshot when the records it needs were compacted away.
    private func catchUp(_ database: Database, atMost limit: Int = .max) async throws {
        var applied = 0
        while applied < limit {
            let position = database.position
            let records = try await shared.records(database: name, after: position, limit: Self.catchUpPage)
            guard let first = records.first else { return }
            if first.sequence != position + 1 {
                let snapshot = try await Self.loadSnapshot(name: name, log: shared)
                database.logger.warning("replica fell behind the compacted log; resyncing from a snapshot", metadata: [
                    "database": "\(name)", "snapshot": "\(snapshot.position)",
                ])
                database.resync(to: snapshot)
                continue
            }
            try database.applyLogged(records)
            applied += records.count
            if records.count < Self.catchUpPage { return }
        }
    }

    // MARK: - Snapshots

    func takeSnapshot(of database: Database) {
        Task {
            do {
                try await self.storeSharedSnapshot(of: database, force: false)
            } catch {
                database.logger.error("could not store a snapshot in the cluster", metadata: ["database": "\(self.name)", "error": "\(error)"])
            }
        }
    }

    /// A replica's snapshots are the cluster's (``storeSharedSnapshot(of:force:)``).
    func snapshotNow(of database: Database) {}

    @discardableResult
    func storeSharedSnapshot(of database: Database, force: Bool) async throws -> Bool {
        let counted = database.markSnapshotRunning()
        let taken = Mutex<(sequence: Int64, bytes: Int)?>(nil)
        let declinedAt = Mutex<Int64?>(nil)
        let stored: Bool
        do {
            stored = try await shared.storeSnapshot(database: name) { newest in
                let (version, settings) = database.publishedWithSettings()
                let threshold = database.options.snapshotAfterWrites
                if !force, version.sequence - newest < Int64(max(1, min(counted, threshold) / 2)) {
                    declinedAt.withLock { $0 = newest }
                    return nil
                }
                let chunks = try await Self.serialize(version.state.root)
                taken.withLock { $0 = (version.sequence, chunks.reduce(0) { $0 + $1.count }) }
                return SharedSnapshot(sequence: version.sequence, chunks: chunks, settings: settings)
            }
        } catch {
            database.snapshotFailed()
            throw error
        }
        let snapshot = taken.withLock { $0 }
        // What was applied since the newest snapshot (this one, or another node's) counts
        // towards the next one.
        database.snapshotFinished(covering: snapshot?.sequence ?? declinedAt.withLock { $0 }, bytes: snapshot?.bytes)
        if stored, let snapshot {
            database.logger.info("snapshot stored in the cluster", metadata: [
                "database": "\(name)", "sequence": "\(snapshot.sequence)", "bytes": "\(snapshot.bytes)",
            ])
        }
        return stored
    }

    /// The tree as export JSON in pieces of a few megabytes, made off the cooperative pool
    /// (serializing a large tree takes a while).
    private static func serialize(_ root: Node) async throws -> [[UInt8]] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                var chunks: [[UInt8]] = []
                var writer = JSONWriter(format: .init(export: true), chunkSize: 4 << 20) { chunks.append(Array($0)) }
                do {
                    try writer.writeFlushing(root)
                    continuation.resume(returning: chunks)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    // MARK: - Closing

    func close(_ database: Database) {
        database.closeWriter(refusing: Self.stopping)
        wakeUp.yield()
        wakeUp.finish()
    }

    func settle() {}
}
