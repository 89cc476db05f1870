import Foundation
import GRDB

extension SQLiteFileMetadata {
    /// Makes a backup's copy of `files.sqlite` (at `path`, not in use) agree with the content
    /// the backup holds.
    ///
    /// Unfinished uploads are dropped: their parts are not copied, so a client starts such an
    /// upload again after a restore. Then `copyContent` is called with every blob the objects
    /// point at; it copies each and returns the ones it could not find (objects deleted while
    /// the backup ran), whose objects are dropped too, so the copy holds the objects as
    /// they were just after those deletions.
    /// - Returns: how many objects the copy keeps.
    public static func reconcileBackupCopy(at path: String, copyContent: ([String]) throws -> Set<String>) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        let blobs = try queue.write { db -> [String] in
            try db.execute(sql: "DELETE FROM upload")
            return try String.fetchAll(db, sql: "SELECT blob FROM object ORDER BY blob")
        }
        let missing = try copyContent(blobs)
        return try queue.write { db -> Int in
            for blob in missing { try db.execute(sql: "DELETE FROM object WHERE blob = ?", arguments: [blob]) }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM object") ?? 0
        }
    }
}
