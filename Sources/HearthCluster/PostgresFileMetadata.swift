import Foundation
import HearthFiles
import Logging
import PostgresNIO

/// A cluster's file metadata (objects and resumable uploads) in the PostgreSQL its nodes share;
/// the content stays in a folder every node mounts (see ``HearthFiles/FileStore/init(directory:metadata:maxObjectSize:uploadLimits:clock:makeID:)``).
/// It behaves as ``HearthFiles/SQLiteFileMetadata`` does (the same suite checks both).
///
/// Read-modify-writes lock the object's row (`SELECT … FOR UPDATE`) for their transaction; two
/// nodes recording a new object under one name at once collide on the primary key, and the
/// loser's transaction runs again and replaces the winner's, as a later write does. Names use
/// the `C` collation: byte order, as SQLite compares, whatever the database's locale.
public final class PostgresFileMetadata: FileMetadataStorage {
    let client: PostgresClient
    let logger: Logger
    /// Decides the events of storage triggers, committed with the changes that make them in
    /// the cluster's outbox (source `files`).
    let recorder: (any FileEventRecorder)?

    /// - Parameters:
    ///   - client: a running client (its `run()` is the caller's to run). Call ``prepare()``
    ///     before anything else.
    ///   - recorder: the functions' storage triggers, if any.
    public init(client: PostgresClient, recorder: (any FileEventRecorder)? = nil, logger: Logger) {
        self.client = client
        self.recorder = recorder
        self.logger = logger
    }

    /// The cluster outbox's source for file events.
    public static let outboxSource = "files"

    /// Records the events `changes` make, inside the transaction on `connection`.
    /// - Returns: true when there were events (the recorder is told once the transaction committed).
    private func record(_ changes: [FileChange], on connection: PostgresConnection) async throws -> Bool {
        guard let recorder, !changes.isEmpty else { return false }
        let events = recorder.events(for: changes)
        return try await PostgresOutbox.record(events, source: Self.outboxSource, on: connection, logger: logger) != nil
    }

    /// Runs `body` in a retried transaction and tells the recorder when what it recorded committed.
    private func recordingTransaction<T: Sendable>(
        _ body: @Sendable (PostgresConnection) async throws -> (T, recorded: Bool)
    ) async throws -> T {
        let (result, recorded) = try await client.retryingTransaction(logger: logger, body)
        if recorded { recorder?.committed() }
        return result
    }

    /// Makes the tables when they are missing (safe to run on every node at start).
    public func prepare() async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_file_object (
                bucket TEXT COLLATE "C" NOT NULL,
                name TEXT COLLATE "C" NOT NULL,
                blob TEXT NOT NULL,
                size BIGINT NOT NULL,
                content_type TEXT NOT NULL,
                md5 TEXT NOT NULL,
                generation BIGINT NOT NULL,
                metageneration BIGINT NOT NULL,
                time_created BIGINT NOT NULL,
                updated BIGINT NOT NULL,
                cache_control TEXT,
                content_disposition TEXT,
                content_encoding TEXT,
                content_language TEXT,
                custom_metadata TEXT NOT NULL,
                download_tokens TEXT NOT NULL,
                PRIMARY KEY (bucket, name)
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_file_object_blob ON hearth_file_object(blob)",
            """
            CREATE TABLE IF NOT EXISTS hearth_file_upload (
                id TEXT PRIMARY KEY,
                bucket TEXT NOT NULL,
                name TEXT NOT NULL,
                fields TEXT NOT NULL,
                declared_size BIGINT,
                created_at BIGINT NOT NULL,
                status TEXT NOT NULL,
                generation BIGINT
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_file_upload_created ON hearth_file_upload(created_at)",
            // Who started each upload (only they may continue it; the limits count by it), and
            // when it last received a chunk (idle uploads are removed).
            "ALTER TABLE hearth_file_upload ADD COLUMN IF NOT EXISTS owner TEXT",
            "ALTER TABLE hearth_file_upload ADD COLUMN IF NOT EXISTS last_active_at BIGINT",
            "CREATE INDEX IF NOT EXISTS hearth_file_upload_active_owner ON hearth_file_upload(status, owner)",
            // The content's CRC-32C, which Cloud Storage's clients check (null for older objects).
            "ALTER TABLE hearth_file_object ADD COLUMN IF NOT EXISTS crc32c TEXT",
        ])
    }

    // MARK: - Objects

    public func object(bucket: String, name: String) async throws -> StoredObject? {
        try await objects("SELECT * FROM hearth_file_object WHERE bucket = \(bucket) AND name = \(name)").first
    }

    public func count(bucket: String) async throws -> Int {
        try await client.withConnection { connection in
            var count = 0
            let rows = try await connection.query("SELECT count(*) FROM hearth_file_object WHERE bucket = \(bucket)", logger: logger)
            for try await (value) in rows.decode(Int.self) { count = value }
            return count
        }
    }

    public func buckets() async throws -> [String] {
        try await client.withConnection { connection in
            var buckets: [String] = []
            let rows = try await connection.query("SELECT DISTINCT bucket FROM hearth_file_object ORDER BY bucket", logger: logger)
            for try await (bucket) in rows.decode(String.self) { buckets.append(bucket) }
            return buckets
        }
    }

    public func put(_ object: StoredObject) async throws -> (object: StoredObject, replacedBlob: String?) {
        try await recordingTransaction { connection in
            var object = object
            let previous = try await Self.objects(
                "SELECT * FROM hearth_file_object WHERE bucket = \(object.bucket) AND name = \(object.name) FOR UPDATE",
                on: connection, logger
            ).first
            if let previous {
                // Another node's clock may be ahead: generations of one name still only grow.
                if previous.generation >= object.generation { object.generation = previous.generation + 1 }
                try await Self.update(object, on: connection, logger)
            } else {
                // A plain insert: a node recording the same new name at once makes this fail,
                // and the transaction runs again, now replacing that node's object.
                try await Self.insert(object, on: connection, logger)
            }
            let recorded = try await self.record((previous.map { [FileChange.deleted($0)] } ?? []) + [.finalized(object)], on: connection)
            return ((object, previous?.blob), recorded)
        }
    }

    public func update(
        bucket: String, name: String, _ change: @escaping @Sendable (StoredObject) throws -> StoredObject
    ) async throws -> StoredObject {
        try await recordingTransaction { connection in
            guard let existing = try await Self.objects(
                "SELECT * FROM hearth_file_object WHERE bucket = \(bucket) AND name = \(name) FOR UPDATE", on: connection, logger
            ).first else { throw FilesError.notFound }
            var updated = try change(existing)
            // The object stays where it is, whatever the change says.
            updated.bucket = bucket
            updated.name = name
            try await Self.update(updated, on: connection, logger)
            let changes: [FileChange] =
                updated.generation == existing.generation ? [.metadataUpdated(updated)] : [.deleted(existing), .finalized(updated)]
            return (updated, try await self.record(changes, on: connection))
        }
    }

    public func delete(
        bucket: String, name: String, authorize: @escaping @Sendable (StoredObject) throws -> Void
    ) async throws -> StoredObject {
        try await recordingTransaction { connection in
            guard let existing = try await Self.objects(
                "SELECT * FROM hearth_file_object WHERE bucket = \(bucket) AND name = \(name) FOR UPDATE", on: connection, logger
            ).first else { throw FilesError.notFound }
            try authorize(existing)
            try await Self.delete(bucket: bucket, name: name, on: connection, logger)
            return (existing, try await self.record([.deleted(existing)], on: connection))
        }
    }

    public func objects(bucket: String, after: String?, from: String, before: String?, limit: Int) async throws -> [StoredObject] {
        // Only the bounds given, so the primary key's order serves the range (O(log N + n)).
        var binds = PostgresBindings()
        binds.append(bucket)
        var sql = "SELECT * FROM hearth_file_object WHERE bucket = $1"
        binds.append(after ?? from)
        sql += after == nil ? " AND name >= $2" : " AND name > $2"
        if let before {
            binds.append(before)
            sql += " AND name < $\(binds.count)"
        }
        binds.append(limit)
        sql += " ORDER BY name LIMIT $\(binds.count)"
        return try await objects(PostgresQuery(unsafeSQL: sql, binds: binds))
    }

    public func referencedBlobs(among blobs: [String]) async throws -> Set<String> {
        guard !blobs.isEmpty else { return [] }
        return try await client.withConnection { connection in
            var referenced: Set<String> = []
            let rows = try await connection.query(
                "SELECT blob FROM hearth_file_object WHERE blob = ANY(\(blobs)::text[])", logger: logger)
            for try await (blob) in rows.decode(String.self) { referenced.insert(blob) }
            return referenced
        }
    }

    // MARK: - Uploads

    public func addUpload(_ session: UploadSession, maxPerOwner: Int, maxTotal: Int) async throws {
        let fields = String(decoding: try Self.sortedEncoder.encode(session.fields), as: UTF8.self)
        let status = session.status.rawValue
        let owner = session.owner?.text
        let key = session.owner?.quotaKey
        try await client.retryingTransaction(logger: logger) { [logger] connection in
            // One start at a time across the cluster, so that the counts hold until the insert.
            try await connection.query("SELECT pg_advisory_xact_lock(7361003)", logger: logger)
            var open = 0
            var owned = 0
            let rows = try await connection.query(
                """
                SELECT count(*), count(*) FILTER (WHERE owner = \(key)) FROM hearth_file_upload WHERE status = 'active'
                """, logger: logger)
            for try await (all, mine) in rows.decode((Int, Int).self) {
                open = all
                owned = mine
            }
            guard open < maxTotal else { throw FilesError.uploadsFull }
            guard key == nil || owned < maxPerOwner else { throw FilesError.tooManyUploads }
            try await connection.query(
                """
                INSERT INTO hearth_file_upload (id, bucket, name, fields, declared_size, created_at, status, owner, last_active_at)
                VALUES (\(session.id), \(session.bucket), \(session.name), \(fields), \(session.declaredSize), \(session.createdAt),
                    \(status), \(owner), \(session.lastActiveAt))
                """, logger: logger)
        }
    }

    public func upload(id: String) async throws -> UploadSession? {
        try await client.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT bucket, name, fields, declared_size, created_at, status, owner, last_active_at
                FROM hearth_file_upload WHERE id = \(id)
                """,
                logger: logger)
            var session: UploadSession?
            for try await (bucket, name, fieldsText, declared, created, status, owner, active) in rows.decode(
                (String, String, String, Int64?, Int64, String, String?, Int64?).self)
            {
                let fields = (try? JSONDecoder().decode(ObjectFields.self, from: Data(fieldsText.utf8))) ?? ObjectFields()
                session = UploadSession(
                    id: id, bucket: bucket, name: name, fields: fields, declaredSize: declared, received: 0,
                    status: UploadSession.Status(rawValue: status) ?? .cancelled, createdAt: created,
                    owner: owner.flatMap(UploadOwner.init(text:)), lastActiveAt: active)
            }
            return session
        }
    }

    public func setUpload(id: String, status: UploadSession.Status, generation: Int64?) async throws {
        let text = status.rawValue
        _ = try await client.query(
            """
            UPDATE hearth_file_upload SET status = \(text), generation = COALESCE(\(generation)::bigint, generation)
            WHERE id = \(id)
            """, logger: logger)
    }

    public func touchUpload(id: String, at time: Int64) async throws {
        _ = try await client.query(
            """
            UPDATE hearth_file_upload SET last_active_at = GREATEST(COALESCE(last_active_at, created_at), \(time))
            WHERE id = \(id)
            """, logger: logger)
    }

    public func removeUploads(
        createdAtOrBefore created: Int64, lastActiveAtOrBefore idle: Int64, sparing: Set<String>
    ) async throws -> [String] {
        let spared = Array(sparing)
        return try await client.withConnection { connection in
            let rows = try await connection.query(
                """
                DELETE FROM hearth_file_upload
                WHERE (created_at <= \(created) OR (status = 'active' AND COALESCE(last_active_at, created_at) <= \(idle)))
                    AND NOT (id = ANY(\(spared)::text[]))
                RETURNING id, status
                """, logger: logger)
            var removed: [String] = []
            for try await (id, status) in rows.decode((String, String).self) where status == UploadSession.Status.active.rawValue {
                removed.append(id)
            }
            return removed
        }
    }

    public func activeUploads(among ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return try await client.withConnection { connection in
            var active: Set<String> = []
            let rows = try await connection.query(
                "SELECT id FROM hearth_file_upload WHERE status = 'active' AND id = ANY(\(ids)::text[])", logger: logger)
            for try await (id) in rows.decode(String.self) { active.insert(id) }
            return active
        }
    }

    // MARK: - Rows

    private static let sortedEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    private func objects(_ query: PostgresQuery) async throws -> [StoredObject] {
        try await client.withConnection { connection in try await Self.objects(query, on: connection, logger) }
    }

    private static func objects(_ query: PostgresQuery, on connection: PostgresConnection, _ logger: Logger) async throws -> [StoredObject] {
        var objects: [StoredObject] = []
        for try await row in try await connection.query(query, logger: logger) { objects.append(try object(row)) }
        return objects
    }

    private static func delete(bucket: String, name: String, on connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM hearth_file_object WHERE bucket = \(bucket) AND name = \(name)", logger: logger)
    }

    private static func insert(_ object: StoredObject, on connection: PostgresConnection, _ logger: Logger) async throws {
        let custom = try StoredObject.customMetadataText(object.customMetadata)
        let tokens = StoredObject.downloadTokensText(object.downloadTokens)
        try await connection.query(
            """
            INSERT INTO hearth_file_object (bucket, name, blob, size, content_type, md5, crc32c, generation, metageneration,
                time_created, updated, cache_control, content_disposition, content_encoding, content_language,
                custom_metadata, download_tokens)
            VALUES (\(object.bucket), \(object.name), \(object.blob), \(object.size), \(object.contentType), \(object.md5Hash),
                \(object.crc32c), \(object.generation), \(object.metageneration), \(object.timeCreated), \(object.updated), \(object.cacheControl),
                \(object.contentDisposition), \(object.contentEncoding), \(object.contentLanguage), \(custom), \(tokens))
            """, logger: logger)
    }

    /// Rewrites a recorded object's row in place (a delete and insert would hide it from a
    /// transaction waiting on its lock).
    private static func update(_ object: StoredObject, on connection: PostgresConnection, _ logger: Logger) async throws {
        let custom = try StoredObject.customMetadataText(object.customMetadata)
        let tokens = StoredObject.downloadTokensText(object.downloadTokens)
        try await connection.query(
            """
            UPDATE hearth_file_object SET blob = \(object.blob), size = \(object.size), content_type = \(object.contentType),
                md5 = \(object.md5Hash), crc32c = \(object.crc32c), generation = \(object.generation), metageneration = \(object.metageneration),
                time_created = \(object.timeCreated), updated = \(object.updated), cache_control = \(object.cacheControl),
                content_disposition = \(object.contentDisposition), content_encoding = \(object.contentEncoding),
                content_language = \(object.contentLanguage), custom_metadata = \(custom), download_tokens = \(tokens)
            WHERE bucket = \(object.bucket) AND name = \(object.name)
            """, logger: logger)
    }

    private static func object(_ row: PostgresRow) throws -> StoredObject {
        let row = row.makeRandomAccess()
        return StoredObject(
            bucket: try row["bucket"].decode(String.self), name: try row["name"].decode(String.self),
            size: try row["size"].decode(Int64.self), contentType: try row["content_type"].decode(String.self),
            md5Hash: try row["md5"].decode(String.self), crc32c: try row["crc32c"].decode(String?.self), generation: try row["generation"].decode(Int64.self),
            metageneration: try row["metageneration"].decode(Int64.self), timeCreated: try row["time_created"].decode(Int64.self),
            updated: try row["updated"].decode(Int64.self), cacheControl: try row["cache_control"].decode(String?.self),
            contentDisposition: try row["content_disposition"].decode(String?.self),
            contentEncoding: try row["content_encoding"].decode(String?.self),
            contentLanguage: try row["content_language"].decode(String?.self),
            customMetadata: StoredObject.customMetadata(text: try row["custom_metadata"].decode(String.self)),
            downloadTokens: StoredObject.downloadTokens(text: try row["download_tokens"].decode(String.self)),
            blob: try row["blob"].decode(String.self))
    }
}
