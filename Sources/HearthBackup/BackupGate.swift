import Foundation
import Synchronization

/// Lets one backup run at a time in a server (the schedule's or one asked for from the
/// console), and tells how far the running one is.
///
/// Threading: a lock guards the state; the backup itself runs outside it.
public final class BackupGate: Sendable {
    private let state = Mutex<DataFolderBackup.Progress?>(nil)
    private let outcomes = Mutex(Outcomes())

    /// When the last backups finished and failed (milliseconds since 1970), and why the last
    /// failure failed: what the console warns about.
    public struct Outcomes: Sendable, Equatable, Encodable {
        public var lastFinished: Int64?
        public var lastFailed: Int64?
        public var lastError: String?
    }

    /// A gate with no backup running.
    public init() {}

    /// Marks a backup as running; false when one already is.
    public func enter() -> Bool {
        state.withLock { state in
            guard state == nil else { return false }
            state = DataFolderBackup.Progress(doneBytes: 0, totalBytes: 0, item: "")
            return true
        }
    }

    func report(_ progress: DataFolderBackup.Progress) {
        state.withLock { state in
            if state != nil { state = progress }
        }
    }

    /// Marks the running backup as done, so another may start.
    public func leave() {
        state.withLock { $0 = nil }
    }

    /// How far the running backup is; nil when none runs.
    public var running: DataFolderBackup.Progress? { state.withLock { $0 } }

    /// The last backups' outcomes (since the server started).
    public var lastOutcomes: Outcomes { outcomes.withLock { $0 } }

    func recordFinished(at time: Int64) {
        outcomes.withLock { $0.lastFinished = time }
    }

    func recordFailed(at time: Int64, _ error: String) {
        outcomes.withLock { outcomes in
            outcomes.lastFailed = time
            outcomes.lastError = error
        }
    }
}
