import Foundation
import GRDB

/// Reads a database folder's SQLite files directly, read-only, the way an operator would
/// inspect them: which log records and which snapshots are on disk.
struct SQLiteInspector {
    let folder: URL

    private func open(_ file: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        return try DatabaseQueue(path: folder.appendingPathComponent(file).path, configuration: configuration)
    }

    /// The sequence numbers in the log table, in order.
    func logSequences() throws -> [Int64] {
        try open("log.sqlite").read { db in
            try Int64.fetchAll(db, sql: "SELECT seq FROM log ORDER BY seq")
        }
    }

    /// The sequence numbers of complete snapshots, in order.
    func snapshotSequences() throws -> [Int64] {
        try open("snapshots.sqlite").read { db in
            try Int64.fetchAll(db, sql: "SELECT seq FROM snapshot_done ORDER BY seq")
        }
    }

    /// The distinct sequence numbers that have snapshot chunks stored.
    func snapshotChunkSequences() throws -> [Int64] {
        try open("snapshots.sqlite").read { db in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT seq FROM snapshot ORDER BY seq")
        }
    }

    /// The kinds and paths of the log records, in order.
    func logRecords() throws -> [(kind: String, path: String)] {
        try open("log.sqlite").read { db in
            try Row.fetchAll(db, sql: "SELECT kind, path FROM log ORDER BY seq").map { ($0[0], $0[1]) }
        }
    }
}
