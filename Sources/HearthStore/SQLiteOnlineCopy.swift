import Foundation
import GRDB

/// Copies a SQLite database file that another process may be writing, with SQLite's online
/// backup API: the copy is the database as of one committed transaction.
///
/// The source is read through its own read-only connection inside one read transaction, so in
/// WAL mode the writer is never blocked and the copy never restarts when the writer commits
/// between steps (it goes on from the snapshot the transaction fixed). The copy is written to
/// `<destination>.partial`, synced, and renamed into place, so a destination that exists is whole.
public enum SQLiteOnlineCopy {
    /// How far a copy is: pages copied of the total.
    public struct Progress: Sendable, Equatable {
        /// Pages copied so far.
        public var copiedPages: Int
        /// Pages in the source database.
        public var totalPages: Int
        /// Bytes per page, to turn pages into bytes.
        public var pageSize: Int
    }

    /// Copies `source` to `destination` (which must not exist).
    /// - Parameter pagesPerStep: pages copied between progress reports.
    public static func copy(
        from source: URL, to destination: URL, pagesPerStep: Int32 = 256, progress: (Progress) -> Void = { _ in }
    ) throws {
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw StoreError("\(destination.path) already exists")
        }
        let partial = destination.appendingPathExtension("partial")
        try? FileManager.default.removeItem(at: partial)
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(10)
        let reader = try DatabaseQueue(path: source.path, configuration: readOnly)
        let writer = try DatabaseQueue(path: partial.path)
        try writer.writeWithoutTransaction { target in
            try reader.inDatabase { db in
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.inTransaction(.deferred) {
                    // The first read starts the transaction's snapshot.
                    _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                    try withoutActuallyEscaping(progress) { progress in
                        try db.backup(to: target, pagesPerStep: pagesPerStep) { step in
                            progress(Progress(
                                copiedPages: step.totalPageCount - step.remainingPageCount,
                                totalPages: step.totalPageCount, pageSize: pageSize))
                        }
                    }
                    return .commit
                }
            }
            // The copy is a plain rollback-journal file: whole without its -wal.
            try target.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        try writer.close()
        try reader.close()
        try syncFile(at: partial)
        try FileManager.default.moveItem(at: partial, to: destination)
    }

    /// Flushes a file's content to the disk.
    public static func syncFile(at url: URL) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.synchronize()
    }
}
