import Dispatch
import Foundation
import HearthCore
import Logging
import Synchronization

extension Database {
    /// Counts logged work and starts a background snapshot when enough has built up.
    func noteLogged(_ batch: [Pending]) {
        let start = writer.withLock { state -> Bool in
            state.writesSinceSnapshot += batch.count
            state.bytesSinceSnapshot += batch.reduce(0) { $0 + $1.record.data.count }
            guard !state.snapshotting,
                state.writesSinceSnapshot >= options.snapshotAfterWrites
                    || state.bytesSinceSnapshot >= max(options.snapshotAfterBytes, state.lastSnapshotBytes)
            else { return false }
            state.snapshotting = true
            return true
        }
        if start { snapshotQueue.async { self.takeSnapshot() } }
    }

    /// Writes a snapshot of the published version now, in the background, and waits for it.
    public func snapshot() {
        let start = writer.withLock { state -> Bool in
            guard !state.snapshotting else { return false }
            state.snapshotting = true
            return true
        }
        if start {
            snapshotQueue.sync { self.takeSnapshot() }
        } else {
            snapshotQueue.sync {}
        }
    }

    /// Streams the published version into the snapshot store and compacts the log behind it.
    private func takeSnapshot() {
        guard let log else { return }
        let version = current
        defer { writer.withLock { $0.snapshotting = false } }
        do {
            let snapshotBytes = try log.storeSnapshot(
                of: version.state.root, sequence: version.sequence, createdAt: options.clock(), history: options.history)
            writer.withLock { state in
                // Writes logged while the snapshot ran still count towards the next one.
                let covered = state.nextSequence - 1 - version.sequence
                state.writesSinceSnapshot = Int(max(0, covered))
                state.bytesSinceSnapshot = 0
                state.lastSnapshotBytes = snapshotBytes
            }
            logger.debug("snapshot written", metadata: ["database": "\(name)", "sequence": "\(version.sequence)"])
        } catch {
            logger.error("snapshot failed", metadata: ["database": "\(name)", "error": "\(error)"])
        }
    }

    /// Waits for in-flight commits, then writes a final snapshot if the log has grown since the
    /// last one, so the next start replays little.
    public func close() {
        if shared != nil {
            closeReplica()
            return
        }
        writer.withLock { $0.closed = true }
        commitQueue.sync {}
        let needsSnapshot = writer.withLock { $0.writesSinceSnapshot > 0 }
        if needsSnapshot { snapshot() }
        snapshotQueue.sync {}
    }
}
