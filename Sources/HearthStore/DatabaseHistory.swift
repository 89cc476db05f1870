import Foundation
import GRDB
import HearthCore

/// A database's history as its folder holds it: the snapshots and log records kept for
/// ``DatabaseOptions/history``. Reads only, through read-only SQLite connections, so it works
/// while a server is writing to the same folder.
///
/// A moment is rebuilt from the newest snapshot at or before it and the log records after that
/// snapshot, up to the moment's sequence number (see ``SnapshotRetention``).
public struct DatabaseHistory: Sendable {
    /// One logged write, as `hearth history` lists it.
    public struct Entry: Sendable, Equatable {
        /// Its position in the log.
        public var sequence: Int64
        /// When it was committed (ms since the epoch); nil for records logged before commit
        /// times were kept.
        public var committedAt: Int64?
        /// `set` or `update` (see ``LogRecord``).
        public var kind: String
        /// Where it wrote.
        public var path: String
        /// The size of its stored value, in bytes.
        public var bytes: Int
    }

    /// What the history covers: from the oldest snapshot kept to the last write.
    public struct Range: Sendable, Equatable {
        /// The earliest sequence number a restore can reach.
        public var earliestSequence: Int64
        /// When that point was reached, where known (ms since the epoch).
        public var earliestTime: Int64?
        /// The last write's sequence number.
        public var latestSequence: Int64
        /// When that write was committed (ms since the epoch); nil when not recorded.
        public var latestTime: Int64?
    }

    /// A point to restore to.
    public enum Target: Sendable, Equatable {
        /// Just after the write with this sequence number.
        case sequence(Int64)
        /// As the database was at this time (ms since the epoch): every write committed then
        /// or before, none after.
        case time(Int64)
    }

    private let log: DatabaseQueue
    private let snapshots: DatabaseQueue

    /// Opens the history of the database stored in `folder` (its `log.sqlite` and `snapshots.sqlite`).
    /// - Throws: ``StoreError`` when the folder holds no database.
    public init(folder: URL) throws {
        let logPath = folder.appendingPathComponent("log.sqlite").path
        let snapshotsPath = folder.appendingPathComponent("snapshots.sqlite").path
        guard FileManager.default.fileExists(atPath: logPath) else {
            throw StoreError("no database in \(folder.path)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        log = try DatabaseQueue(path: logPath, configuration: configuration)
        snapshots = try DatabaseQueue(path: snapshotsPath, configuration: configuration)
    }

    /// The range a restore can reach, or nil for a database without writes.
    public func range() throws -> Range? {
        let points = try snapshotPoints()
        let (first, last) = try log.read { db in
            (
                try Row.fetchOne(db, sql: "SELECT seq, at FROM log ORDER BY seq LIMIT 1"),
                try Row.fetchOne(db, sql: "SELECT seq, at FROM log ORDER BY seq DESC LIMIT 1")
            )
        }
        let latest: (Int64, Int64?)
        if let last {
            latest = (last[0], last[1])
        } else if let newest = points.last {
            latest = (newest.sequence, newest.createdAt)
        } else {
            return nil
        }
        // The log is whole from its first record when that is write 1; otherwise a restore
        // starts from the oldest snapshot.
        if let first, (first[0] as Int64) == 1 {
            return Range(earliestSequence: 0, earliestTime: nil, latestSequence: latest.0, latestTime: latest.1)
        }
        let base = points.first
        return Range(
            earliestSequence: base?.sequence ?? latest.0, earliestTime: base?.createdAt,
            latestSequence: latest.0, latestTime: latest.1)
    }

    /// The last `limit` writes at or under `path` (newest last), optionally only those up to
    /// `before` (a sequence number).
    public func entries(limit: Int, under path: Path = .root, before: Int64? = nil) throws -> [Entry] {
        try log.read { db in
            var sql = "SELECT seq, at, kind, path, length(data) FROM log"
            var arguments: StatementArguments = []
            var conditions: [String] = []
            if let before {
                conditions.append("seq < ?")
                _ = arguments.append(contentsOf: [before])
            }
            if !path.isRoot {
                // A write at the path, under it, or above it (an update or set of an ancestor).
                let text = path.description
                conditions.append("(path = ? OR path LIKE ? ESCAPE '\\' OR ? LIKE path || '/%' OR path = '/')")
                _ = arguments.append(contentsOf: [text, Self.likePrefix(text) + "/%", text])
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += " ORDER BY seq DESC LIMIT ?"
            _ = arguments.append(contentsOf: [limit])
            return try Row.fetchAll(db, sql: sql, arguments: arguments).reversed().map { row in
                Entry(sequence: row[0], committedAt: row[1], kind: row[2], path: row[3], bytes: row[4])
            }
        }
    }

    /// The sequence number `target` stands for.
    /// - Throws: ``StoreError`` when the target is outside the history kept.
    public func sequence(for target: Target) throws -> Int64 {
        guard let range = try range() else { throw StoreError("the database has no writes to restore") }
        let sequence: Int64
        switch target {
        case .sequence(let value):
            sequence = value
        case .time(let time):
            let logged = try log.read { db in
                try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM log WHERE at <= ?", arguments: [time])
            }
            if let logged {
                sequence = logged
            } else if let earliest = range.earliestTime, earliest <= time {
                // Before every write kept, but after the base snapshot was written.
                sequence = range.earliestSequence
            } else if range.earliestSequence == 0 {
                // Before the first write: the empty tree.
                sequence = 0
            } else {
                throw StoreError("\(Self.describe(time)) is before the history kept (\(Self.describe(range)))")
            }
        }
        guard sequence >= range.earliestSequence, sequence <= range.latestSequence else {
            throw StoreError("write \(sequence) is outside the history kept (\(Self.describe(range)))")
        }
        return sequence
    }

    /// The whole tree as it was just after write `sequence`.
    public func tree(at sequence: Int64) throws -> Node {
        let base = try snapshotPoints().last { $0.sequence <= sequence }
        var state = DatabaseState()
        var from: Int64 = 0
        if let base {
            state = DatabaseState(root: try JSONParser.parse(try snapshotBytes(at: base.sequence)).node)
            from = base.sequence
        }
        try log.read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT seq, kind, path, data FROM log WHERE seq > ? AND seq <= ? ORDER BY seq",
                arguments: [from, sequence])
            var expected = from + 1
            while let row = try rows.next() {
                let record = LogRecord(sequence: row[0], kind: row[1], path: row[2], data: [UInt8](row[3] as Data))
                guard record.sequence == expected else {
                    throw StoreError("the log is missing writes \(expected)–\(record.sequence - 1)")
                }
                state = state.applying(try record.write())
                expected += 1
            }
            guard expected == sequence + 1 else {
                throw StoreError("the log is missing writes \(expected)–\(sequence)")
            }
        }
        return state.root
    }

    /// The database's settings (such as its rules), as stored now.
    func settings() throws -> [String: String] {
        try log.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT name, value FROM setting").map { ($0[0] as String, $0[1] as String) },
                uniquingKeysWith: { _, last in last })
        }
    }

    /// Writes a new database folder holding `tree` as of write `sequence` and `settings`: one
    /// snapshot and an empty log, so the database goes on from `sequence + 1`.
    /// - Throws: ``StoreError`` when `folder` already holds a database.
    static func writeDatabase(
        tree: Node, sequence: Int64, settings: [String: String], to folder: URL, createdAt: Int64
    ) throws {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("log.sqlite").path) {
            throw StoreError("\(folder.path) already holds a database")
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = try WriteLog(folder: folder)
        for (name, value) in settings { try log.setSetting(named: name, to: value) }
        try log.storeSnapshot(of: tree, sequence: sequence, createdAt: createdAt)
    }

    // MARK: - Helpers

    private func snapshotPoints() throws -> [SnapshotRetention.Point] {
        try snapshots.read { db in
            guard try db.tableExists("snapshot_done") else { return [] }
            return try Row.fetchAll(db, sql: "SELECT seq, created_at FROM snapshot_done ORDER BY seq").map { row in
                SnapshotRetention.Point(sequence: row[0], createdAt: row[1])
            }
        }
    }

    private func snapshotBytes(at sequence: Int64) throws -> [UInt8] {
        try snapshots.read { db in
            var bytes: [UInt8] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT data FROM snapshot WHERE seq = ? ORDER BY chunk", arguments: [sequence])
            while let row = try rows.next() { bytes.append(contentsOf: row[0] as Data) }
            return bytes
        }
    }

    private static func likePrefix(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    static func describe(_ time: Int64) -> String {
        Date(timeIntervalSince1970: Double(time) / 1000).formatted(.iso8601)
    }

    static func describe(_ range: Range) -> String {
        let start = range.earliestTime.map { " (\(describe($0)))" } ?? ""
        let end = range.latestTime.map { " (\(describe($0)))" } ?? ""
        return "writes \(range.earliestSequence)\(start) to \(range.latestSequence)\(end)"
    }
}
