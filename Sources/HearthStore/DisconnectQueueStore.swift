import Foundation
import GRDB

/// The onDisconnect operations of open realtime connections, kept on disk until they are
/// applied or cancelled (one SQLite file, WAL, `synchronous=FULL`).
///
/// A connection's operations run when it ends. If the server stops before that (a crash, a
/// `kill -9`), the operations of the connections it had are still here, and the next start
/// applies them: those connections cannot come back, so presence data is right after a crash.
public final class DisconnectQueueStore: Sendable {
    /// One queued operation, as the transport wrote it.
    public struct Record: Sendable, Equatable {
        /// The realtime session that queued it.
        public var session: String
        /// Its place among the session's operations.
        public var position: Int64
        /// The database it writes.
        public var database: String
        /// What to do (`set` or `update`).
        public var kind: String
        /// Where it writes.
        public var path: String
        /// The value (export JSON), or the update object.
        public var data: [UInt8]
        /// Who queued it, as JSON: the rules' `auth` (`null` when signed out); nil for an admin
        /// (and for operations an older version kept, which it applied as an admin). The
        /// operation is judged again as this identity when it runs.
        public var auth: [UInt8]?

        /// A record as the session queued it; `auth` nil means an admin queued it.
        public init(
            session: String, position: Int64, database: String, kind: String, path: String, data: [UInt8], auth: [UInt8]? = nil
        ) {
            self.session = session
            self.position = position
            self.database = database
            self.kind = kind
            self.path = path
            self.data = data
            self.auth = auth
        }
    }

    private let queue: DatabaseQueue

    /// Opens (creating if needed) the store at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.inDatabase { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("queued") { db in
            try db.execute(sql: """
                CREATE TABLE queued (
                    session TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    database TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    path TEXT NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (session, position)
                )
                """)
        }
        migrator.registerMigration("queued-auth") { db in
            try db.execute(sql: "ALTER TABLE queued ADD COLUMN auth BLOB")
        }
        try migrator.migrate(queue)
    }

    /// Keeps `record` until it is removed.
    public func add(_ record: Record) async throws {
        try await queue.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO queued (session, position, database, kind, path, data, auth) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    record.session, record.position, record.database, record.kind, record.path, Data(record.data),
                    record.auth.map { Data($0) },
                ])
        }
    }

    /// Forgets the operations of `session` at `positions` (cancelled ones).
    public func remove(session: String, positions: [Int64]) async throws {
        guard !positions.isEmpty else { return }
        try await queue.write { db in
            for position in positions {
                try db.execute(sql: "DELETE FROM queued WHERE session = ? AND position = ?", arguments: [session, position])
            }
        }
    }

    /// Forgets every operation of `session` (applied, or the session ended without any).
    public func remove(session: String) async throws {
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM queued WHERE session = ?", arguments: [session])
        }
    }

    /// Every kept operation, by session and then position.
    public func all() async throws -> [Record] {
        try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM queued ORDER BY session, position").map { row in
                Record(
                    session: row["session"], position: row["position"], database: row["database"], kind: row["kind"],
                    path: row["path"], data: [UInt8](row["data"] as Data), auth: (row["auth"] as Data?).map { [UInt8]($0) })
            }
        }
    }
}
