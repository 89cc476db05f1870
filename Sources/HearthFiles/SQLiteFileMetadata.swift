import Foundation
import GRDB
import HearthOutbox

/// A file store's metadata in one SQLite file (WAL, `synchronous=FULL`): a single node's
/// `files/files.sqlite`. Work runs on GRDB's own queues, never blocking the cooperative pool.
/// The methods are documented on ``FileMetadataStorage``.
///
/// Given a ``FileEventRecorder``, every put, update and delete commits the events it makes (the
/// functions' storage triggers) in its own transaction, in the outbox tables of the same file
/// (``outbox``).
public final class SQLiteFileMetadata: FileMetadataStorage {
    let pool: DatabasePool
    let recorder: (any FileEventRecorder)?
    /// Where the events of storage triggers wait for delivery.
    public let outbox: SQLiteOutbox
    private let outboxSubscribers = OutboxSubscribers()

    /// Opens (creating if needed) the metadata database at `path`.
    public init(path: String, recorder: (any FileEventRecorder)? = nil) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
        self.recorder = recorder
        outbox = SQLiteOutbox(source: "files", writer: pool)
    }

    /// Records the events `changes` make, inside the caller's transaction.
    private func record(_ changes: [FileChange], in db: Database) throws {
        guard let recorder, !changes.isEmpty else { return }
        let events = recorder.events(for: changes)
        try SQLiteOutbox.record(events, in: db, known: outboxSubscribers)
        if !events.isEmpty {
            db.afterNextTransaction(onCommit: { _ in recorder.committed() })
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("files") { db in
            try db.execute(sql: """
                CREATE TABLE object (
                    bucket TEXT NOT NULL,
                    name TEXT NOT NULL,
                    blob TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    content_type TEXT NOT NULL,
                    md5 TEXT NOT NULL,
                    generation INTEGER NOT NULL,
                    metageneration INTEGER NOT NULL,
                    time_created INTEGER NOT NULL,
                    updated INTEGER NOT NULL,
                    cache_control TEXT,
                    content_disposition TEXT,
                    content_encoding TEXT,
                    content_language TEXT,
                    custom_metadata TEXT NOT NULL,
                    download_tokens TEXT NOT NULL,
                    PRIMARY KEY (bucket, name)
                ) WITHOUT ROWID;
                CREATE TABLE upload (
                    id TEXT PRIMARY KEY NOT NULL,
                    bucket TEXT NOT NULL,
                    name TEXT NOT NULL,
                    fields TEXT NOT NULL,
                    declared_size INTEGER,
                    created_at INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    generation INTEGER
                );
                """)
        }
        // Who started each upload (only they may continue it; the limits count by it), and
        // when it last received a chunk (idle uploads are removed).
        migrator.registerMigration("uploadOwners") { db in
            try db.execute(sql: """
                ALTER TABLE upload ADD COLUMN owner TEXT;
                ALTER TABLE upload ADD COLUMN last_active_at INTEGER;
                CREATE INDEX upload_active_owner ON upload(status, owner);
                """)
        }
        // The content's CRC-32C, which Cloud Storage's clients check (null for older objects).
        migrator.registerMigration("objectCRC32C") { db in
            try db.execute(sql: "ALTER TABLE object ADD COLUMN crc32c TEXT")
        }
        // The events storage triggers record, committed with the changes that make them.
        migrator.registerMigration("outbox") { db in
            try SQLiteOutbox.createTables(in: db)
        }
        migrator.registerMigration("outbox-cursors") { db in
            try SQLiteOutbox.addCursors(in: db)
        }
        return migrator
    }

    // MARK: - Objects

    public func object(bucket: String, name: String) async throws -> StoredObject? {
        try await pool.read { db in try Self.object(bucket: bucket, name: name, in: db) }
    }

    public func count(bucket: String) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM object WHERE bucket = ?", arguments: [bucket]) ?? 0
        }
    }

    public func buckets() async throws -> [String] {
        try await pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT bucket FROM object ORDER BY bucket") }
    }

    public func put(_ object: StoredObject) async throws -> (object: StoredObject, replacedBlob: String?) {
        try await pool.write { db in
            var object = object
            let previous = try Self.object(bucket: object.bucket, name: object.name, in: db)
            if let previous, previous.generation >= object.generation { object.generation = previous.generation + 1 }
            try Self.save(object, in: db)
            try self.record((previous.map { [FileChange.deleted($0)] } ?? []) + [.finalized(object)], in: db)
            return (object, previous?.blob)
        }
    }

    public func update(
        bucket: String, name: String, _ change: @escaping @Sendable (StoredObject) throws -> StoredObject
    ) async throws -> StoredObject {
        try await pool.write { db in
            guard let existing = try Self.object(bucket: bucket, name: name, in: db) else { throw FilesError.notFound }
            let updated = try change(existing)
            try Self.save(updated, in: db)
            if updated.generation == existing.generation {
                try self.record([.metadataUpdated(updated)], in: db)
            } else {
                try self.record([.deleted(existing), .finalized(updated)], in: db)
            }
            return updated
        }
    }

    public func delete(
        bucket: String, name: String, authorize: @escaping @Sendable (StoredObject) throws -> Void
    ) async throws -> StoredObject {
        try await pool.write { db in
            guard let existing = try Self.object(bucket: bucket, name: name, in: db) else { throw FilesError.notFound }
            try authorize(existing)
            try db.execute(sql: "DELETE FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name])
            try self.record([.deleted(existing)], in: db)
            return existing
        }
    }

    public func objects(bucket: String, after: String?, from: String, before: String?, limit: Int) async throws -> [StoredObject] {
        try await pool.read { db in
            var sql = "SELECT * FROM object WHERE bucket = ?"
            var arguments: StatementArguments = [bucket]
            if let after {
                sql += " AND name > ?"
                _ = arguments.append(contentsOf: [after])
            } else {
                sql += " AND name >= ?"
                _ = arguments.append(contentsOf: [from])
            }
            if let before {
                sql += " AND name < ?"
                _ = arguments.append(contentsOf: [before])
            }
            sql += " ORDER BY name LIMIT ?"
            _ = arguments.append(contentsOf: [limit])
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.object(from:))
        }
    }

    public func referencedBlobs(among blobs: [String]) async throws -> Set<String> {
        try await pool.read { db in try Self.referencedBlobs(among: blobs, in: db) }
    }

    static func referencedBlobs(among blobs: [String], in db: Database) throws -> Set<String> {
        let wanted = Set(blobs)
        return Set(try String.fetchAll(db, sql: "SELECT blob FROM object")).intersection(wanted)
    }

    // MARK: - Uploads

    public func addUpload(_ session: UploadSession, maxPerOwner: Int, maxTotal: Int) async throws {
        let encoded = String(decoding: try JSONEncoder.sorted.encode(session.fields), as: UTF8.self)
        try await pool.write { db in
            let open = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload WHERE status = 'active'") ?? 0
            guard open < maxTotal else { throw FilesError.uploadsFull }
            if let key = session.owner?.quotaKey {
                let owned = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM upload WHERE status = 'active' AND owner = ?", arguments: [key]) ?? 0
                guard owned < maxPerOwner else { throw FilesError.tooManyUploads }
            }
            try db.execute(
                sql: """
                    INSERT INTO upload (id, bucket, name, fields, declared_size, created_at, status, owner, last_active_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.id, session.bucket, session.name, encoded, session.declaredSize, session.createdAt,
                    session.status.rawValue, session.owner?.text, session.lastActiveAt,
                ])
        }
    }

    public func upload(id: String) async throws -> UploadSession? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM upload WHERE id = ?", arguments: [id]) else { return nil }
            let fieldsText: String = row["fields"]
            let fields = (try? JSONDecoder().decode(ObjectFields.self, from: Data(fieldsText.utf8))) ?? ObjectFields()
            let owner: String? = row["owner"]
            return UploadSession(
                id: id, bucket: row["bucket"], name: row["name"], fields: fields, declaredSize: row["declared_size"], received: 0,
                status: UploadSession.Status(rawValue: row["status"]) ?? .cancelled, createdAt: row["created_at"],
                owner: owner.flatMap(UploadOwner.init(text:)), lastActiveAt: row["last_active_at"])
        }
    }

    public func setUpload(id: String, status: UploadSession.Status, generation: Int64?) async throws {
        try await pool.write { db in
            if let generation {
                try db.execute(
                    sql: "UPDATE upload SET status = ?, generation = ? WHERE id = ?", arguments: [status.rawValue, generation, id])
            } else {
                try db.execute(sql: "UPDATE upload SET status = ? WHERE id = ?", arguments: [status.rawValue, id])
            }
        }
    }

    public func touchUpload(id: String, at time: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE upload SET last_active_at = max(COALESCE(last_active_at, created_at), ?) WHERE id = ?",
                arguments: [time, id])
        }
    }

    public func removeUploads(
        createdAtOrBefore created: Int64, lastActiveAtOrBefore idle: Int64, sparing: Set<String>
    ) async throws -> [String] {
        try await pool.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, status FROM upload
                    WHERE created_at <= ? OR (status = 'active' AND COALESCE(last_active_at, created_at) <= ?)
                    """,
                arguments: [created, idle])
            var removed: [String] = []
            for row in rows {
                let id: String = row["id"]
                let status: String = row["status"]
                guard !sparing.contains(id) else { continue }
                try db.execute(sql: "DELETE FROM upload WHERE id = ?", arguments: [id])
                if status == UploadSession.Status.active.rawValue { removed.append(id) }
            }
            return removed
        }
    }

    public func activeUploads(among ids: [String]) async throws -> Set<String> {
        try await pool.read { db in Set(try Self.activeUploads(in: db)).intersection(ids) }
    }

    static func activeUploads(in db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM upload WHERE status = 'active'")
    }

    // MARK: - A single node's start

    /// Forgets the uploads made at or before `time`, and gives the IDs of the active ones left
    /// (``FileStore/removeLeftovers()``, which runs before the server takes requests).
    func liveUploads(removingCreatedAtOrBefore time: Int64) throws -> Set<String> {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM upload WHERE created_at <= ?", arguments: [time])
            return Set(try Self.activeUploads(in: db))
        }
    }

    /// Every content file an object points at.
    func referencedBlobs() throws -> Set<String> {
        try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT blob FROM object")) }
    }

    // MARK: - Rows

    static func object(bucket: String, name: String, in db: Database) throws -> StoredObject? {
        try Row.fetchOne(db, sql: "SELECT * FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name])
            .map(object(from:))
    }

    static func save(_ object: StoredObject, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO object (bucket, name, blob, size, content_type, md5, crc32c, generation, metageneration,
                    time_created, updated, cache_control, content_disposition, content_encoding, content_language,
                    custom_metadata, download_tokens)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                object.bucket, object.name, object.blob, object.size, object.contentType, object.md5Hash, object.crc32c, object.generation,
                object.metageneration, object.timeCreated, object.updated, object.cacheControl, object.contentDisposition,
                object.contentEncoding, object.contentLanguage, try StoredObject.customMetadataText(object.customMetadata),
                StoredObject.downloadTokensText(object.downloadTokens),
            ])
    }

    static func object(from row: Row) -> StoredObject {
        StoredObject(
            bucket: row["bucket"], name: row["name"], size: row["size"], contentType: row["content_type"], md5Hash: row["md5"],
            crc32c: row["crc32c"], generation: row["generation"], metageneration: row["metageneration"], timeCreated: row["time_created"],
            updated: row["updated"], cacheControl: row["cache_control"], contentDisposition: row["content_disposition"],
            contentEncoding: row["content_encoding"], contentLanguage: row["content_language"],
            customMetadata: StoredObject.customMetadata(text: row["custom_metadata"]),
            downloadTokens: StoredObject.downloadTokens(text: row["download_tokens"]), blob: row["blob"])
    }
}
