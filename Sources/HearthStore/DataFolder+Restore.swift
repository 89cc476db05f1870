import Foundation
import HearthCore

extension DataFolder {
    /// What ``restoreDatabase(named:to:as:now:)`` did.
    public struct DatabaseRestore: Sendable, Equatable {
        /// The database written.
        public var database: String
        /// The last write it holds.
        public var sequence: Int64
        /// Where the database it replaced was moved (with all its history), or nil.
        public var previous: URL?
    }

    /// Rebuilds database `name` as it was at `target` from its own history.
    ///
    /// With `newName`, the result becomes a new database of that name beside the original
    /// (which must not exist yet). Otherwise it replaces the original, which is moved to
    /// `databases/.<name>.before-restore-<time>` with its whole history, so the restore can be
    /// undone. The rules and other settings are today's. Call before the database is opened.
    /// - Throws: ``StoreError`` when the target is outside the history kept.
    public func restoreDatabase(named name: String, to target: DatabaseHistory.Target, as newName: String? = nil, now: Int64)
        throws -> DatabaseRestore
    {
        guard openDatabases()[name] == nil, newName.map({ openDatabases()[$0] == nil }) ?? true else {
            throw StoreError("the database is open; restore it before serving it")
        }
        let databases = url.appendingPathComponent("databases")
        let original = databases.appendingPathComponent(name)
        let history = try DatabaseHistory(folder: original)
        let sequence = try history.sequence(for: target)
        let tree = try history.tree(at: sequence)
        let settings = try history.settings()
        let targetName = newName ?? name
        guard DataFolder.isValidDatabaseName(targetName) else {
            throw StoreError("'\(targetName)' is not a valid database name (use a-z, 0-9 and -)")
        }
        if newName != nil, FileManager.default.fileExists(atPath: databases.appendingPathComponent(targetName).path) {
            throw StoreError("a database named \(targetName) already exists")
        }
        // Names starting with a dot are not databases, so these folders are never served.
        let restoring = databases.appendingPathComponent(".\(targetName).restoring")
        try? FileManager.default.removeItem(at: restoring)
        try DatabaseHistory.writeDatabase(tree: tree, sequence: sequence, settings: settings, to: restoring, createdAt: now)
        var previous: URL?
        if newName == nil {
            let aside = databases.appendingPathComponent(".\(name).before-restore-\(now)")
            try FileManager.default.moveItem(at: original, to: aside)
            previous = aside
        }
        try FileManager.default.moveItem(at: restoring, to: databases.appendingPathComponent(targetName))
        return DatabaseRestore(database: targetName, sequence: sequence, previous: previous)
    }
}
