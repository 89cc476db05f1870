import Foundation
import GRDB
import HearthCore
import HearthOutbox

/// The files behind a single node's ``LocalLog``: the durable, ordered log of one database's
/// writes, in SQLite (WAL mode, `synchronous=FULL`, so a commit is on disk before it returns),
/// its settings, and its snapshots. Snapshots live in a second
/// SQLite file so that writing one never holds up log commits, and are stored in chunks so that
/// no single row has to hold a whole large tree.
final class WriteLog: Sendable {
    let queue: DatabaseQueue
    let snapshots: DatabaseQueue
    /// A read-only connection to the log's file for the outbox's dispatcher: in WAL mode its
    /// reads never wait for a commit, nor hold one up.
    let outboxReader: DatabaseQueue
    /// The functions whose outbox cursors this file holds (see ``HearthOutbox/OutboxSubscribers``).
    let outboxSubscribers = OutboxSubscribers()

    init(folder: URL) throws {
        let path = folder.appendingPathComponent("log.sqlite").path
        queue = try Self.open(path, migrator: Self.logMigrator)
        snapshots = try Self.open(folder.appendingPathComponent("snapshots.sqlite").path, migrator: Self.snapshotMigrator)
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(5)
        outboxReader = try DatabaseQueue(path: path, configuration: readOnly)
    }

    private static func open(_ path: String, migrator: DatabaseMigrator) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(5)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        // After opening: GRDB's WAL set-up runs after `prepareDatabase` and sets synchronous to
        // NORMAL, under which a commit is not synced (only checkpoints are). FULL syncs the WAL
        // at every commit, so a write is on disk before it is acknowledged.
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        try migrator.migrate(queue)
        return queue
    }

    private static var logMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE log (
                    seq INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL,
                    path TEXT NOT NULL,
                    data BLOB NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-settings") { db in
            try db.execute(sql: "CREATE TABLE setting (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        }
        migrator.registerMigration("v3-commit-time") { db in
            // When each record was committed (milliseconds since the epoch), for restoring to a
            // moment; records logged before this column existed have none.
            try db.execute(sql: "ALTER TABLE log ADD COLUMN at INTEGER")
        }
        migrator.registerMigration("v4-outbox") { db in
            // The events the writes record for functions, committed with them.
            try SQLiteOutbox.createTables(in: db)
        }
        migrator.registerMigration("v5-outbox-cursors") { db in
            // One row per event and a cursor per function (recording no longer grows with functions).
            try SQLiteOutbox.addCursors(in: db)
        }
        return migrator
    }

    private static var snapshotMigrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE snapshot (
                    seq INTEGER NOT NULL,
                    chunk INTEGER NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (seq, chunk)
                );
                CREATE TABLE snapshot_done (
                    seq INTEGER PRIMARY KEY,
                    created_at INTEGER NOT NULL,
                    bytes INTEGER NOT NULL
                );
                """)
        }
        return migrator
    }

    /// Appends records committed at `time` (milliseconds since the epoch), and the events
    /// their writes make, in one transaction: durable together when this returns.
    func append(_ records: [LogRecord], events: [OutboxEvent] = [], at time: Int64) throws {
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO log (seq, kind, path, data, at) VALUES (?, ?, ?, ?, ?)")
            for record in records {
                try statement.execute(arguments: [record.sequence, record.kind, record.path, Data(record.data), time])
            }
            try SQLiteOutbox.record(events, in: db, known: outboxSubscribers)
        }
    }

    /// A stored setting (such as the rules document), or nil.
    func setting(named name: String) throws -> String? {
        try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM setting WHERE name = ?", arguments: [name]) }
    }

    /// Every stored setting.
    func settings() throws -> [String: String] {
        try queue.read { db in
            Dictionary(
                try Row.fetchAll(db, sql: "SELECT name, value FROM setting").map { ($0[0] as String, $0[1] as String) },
                uniquingKeysWith: { _, last in last })
        }
    }

    /// Stores a setting durably, then runs `stored` before any other write to the log's file
    /// can start: concurrent changes reach `stored` in the order they reached the disk.
    func setSetting(named name: String, to value: String, stored: () -> Void = {}) throws {
        try queue.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT OR REPLACE INTO setting (name, value) VALUES (?, ?)", arguments: [name, value])
                return .commit
            }
            stored()
        }
    }

    /// The newest complete snapshot: its sequence number and JSON bytes.
    func newestSnapshot() throws -> (sequence: Int64, bytes: [UInt8])? {
        try snapshots.read { db in
            guard let sequence = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM snapshot_done") else { return nil }
            var bytes: [UInt8] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT data FROM snapshot WHERE seq = ? ORDER BY chunk", arguments: [sequence])
            while let row = try rows.next() {
                let data: Data = row[0]
                bytes.append(contentsOf: data)
            }
            return (sequence, bytes)
        }
    }

    /// Calls `body` with every record after `sequence`, in order.
    func forEachRecord(after sequence: Int64, _ body: (LogRecord) throws -> Void) throws {
        try queue.read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT seq, kind, path, data FROM log WHERE seq > ? ORDER BY seq", arguments: [sequence]
            )
            while let row = try rows.next() {
                let data: Data = row[3]
                try body(LogRecord(sequence: row[0], kind: row[1], path: row[2], data: [UInt8](data)))
            }
        }
    }

    /// The highest sequence number in the log, or nil when it is empty.
    func lastSequence() throws -> Int64? {
        try queue.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM log") }
    }

    /// The number of log records after `sequence`.
    func recordCount(after sequence: Int64) throws -> Int {
        try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM log WHERE seq > ?", arguments: [sequence]) ?? 0
        }
    }

    /// Stores a snapshot taken at `sequence` from chunks, then drops the snapshots and log
    /// records that `history` no longer needs (see ``SnapshotRetention``). The snapshot is durable
    /// before anything is dropped, so a crash at any point leaves a snapshot and every log record
    /// after it.
    /// - Parameter history: how far back, in milliseconds, the database must stay restorable.
    /// - Returns: the snapshot's size in bytes, as `chunks` counted it.
    @discardableResult
    func storeSnapshot(
        sequence: Int64, createdAt: Int64, history: Int64 = 0, chunks: (_ emit: ([UInt8]) throws -> Void) throws -> Int
    ) throws -> Int {
        let total = try snapshots.write { db -> Int in
            try db.execute(sql: "DELETE FROM snapshot WHERE seq = ?", arguments: [sequence])
            let statement = try db.cachedStatement(sql: "INSERT INTO snapshot (seq, chunk, data) VALUES (?, ?, ?)")
            var index = 0
            let total = try chunks { bytes in
                try statement.execute(arguments: [sequence, index, Data(bytes)])
                index += 1
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO snapshot_done (seq, created_at, bytes) VALUES (?, ?, ?)",
                arguments: [sequence, createdAt, total]
            )
            return total
        }
        try compact(now: createdAt, history: history)
        return total
    }

    /// Stores `tree` as the snapshot at `sequence`, written out in bounded chunks, and compacts
    /// as ``storeSnapshot(sequence:createdAt:history:chunks:)`` does.
    /// - Returns: the snapshot's size in bytes.
    @discardableResult
    func storeSnapshot(of tree: Node, sequence: Int64, createdAt: Int64, history: Int64 = 0) throws -> Int {
        try storeSnapshot(sequence: sequence, createdAt: createdAt, history: history) { emit in
            try withoutActuallyEscaping(emit) { emit in
                var total = 0
                var writer = JSONWriter(format: .init(export: true), chunkSize: 4 << 20) { chunk in
                    total += chunk.count
                    try emit(Array(chunk))
                }
                try writer.writeFlushing(tree)
                return total
            }
        }
    }

    /// Drops what restoring to any moment of the last `history` milliseconds does not need.
    func compact(now: Int64, history: Int64) throws {
        var points = try snapshotPoints()
        // A log that still starts at its first record can rebuild any moment from the empty tree.
        if let first = try queue.read({ db in try Row.fetchOne(db, sql: "SELECT seq, at FROM log ORDER BY seq LIMIT 1") }),
            (first[0] as Int64) == 1
        {
            points.insert(SnapshotRetention.Point(sequence: 0, createdAt: (first[1] as Int64?) ?? 0), at: 0)
        }
        let kept = SnapshotRetention.kept(points, now: now, history: history)
        guard let base = kept.first else { return }
        let keptSet = Set(kept)
        let dropped = points.map(\.sequence).filter { $0 > 0 && !keptSet.contains($0) }
        if !dropped.isEmpty {
            try snapshots.write { db in
                for sequence in dropped {
                    try db.execute(sql: "DELETE FROM snapshot WHERE seq = ?", arguments: [sequence])
                    try db.execute(sql: "DELETE FROM snapshot_done WHERE seq = ?", arguments: [sequence])
                }
            }
        }
        if base > 0 {
            try queue.write { db in
                try db.execute(sql: "DELETE FROM log WHERE seq <= ?", arguments: [base])
            }
        }
    }

    /// Every complete snapshot's sequence number and creation time, oldest first.
    func snapshotPoints() throws -> [SnapshotRetention.Point] {
        try snapshots.read { db in
            try Row.fetchAll(db, sql: "SELECT seq, created_at FROM snapshot_done ORDER BY seq").map { row in
                SnapshotRetention.Point(sequence: row[0], createdAt: row[1])
            }
        }
    }
}
