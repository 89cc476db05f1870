import Foundation
import Synchronization

/// Lets one backup run at a time in a server (the schedule's or one asked for from the
/// console), and tells how far the running one is.
///
/// Threading: a lock guards the state; the backup itself runs outside it.
public final class BackupGate: Sendable {
    private let state = Mutex<DataFolderBackup.Progress?>(nil)

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
}
