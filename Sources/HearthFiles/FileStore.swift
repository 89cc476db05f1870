import Crypto
import Foundation
import GRDB
import NIOCore
import NIOFileSystem
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files by bucket and path: content in files named by Hearth under `blobs/`, metadata in
/// SQLite (`files.sqlite`, WAL, `synchronous=FULL`).
///
/// A file appears only when complete: content streams into `tmp/` (or `uploads/` for
/// resumable uploads), is synced, renamed into `blobs/`, and only then does a committed row
/// point at it. A crash at any moment leaves at worst an unreferenced file, which
/// ``removeLeftovers()`` deletes when the server starts.
public final class FileStore: Sendable {
    /// The folder holding everything (a data folder's `files/`).
    public let directory: URL
    /// The largest object accepted, in bytes.
    public let maxObjectSize: Int64
    /// How long an unfinished resumable upload is kept (ms); Cloud Storage keeps them a week.
    public let uploadLifetime: Int64
    let pool: DatabasePool
    let clock: @Sendable () -> Int64
    let makeID: @Sendable () -> String
    private let lastGeneration = Mutex<Int64>(0)
    /// Resumable uploads a request is writing to right now.
    let busyUploads = Mutex<Set<String>>([])

    /// Opens (creating if needed) the store in `directory`.
    /// - Parameters:
    ///   - clock: milliseconds since the epoch.
    ///   - makeID: unique names for content files, uploads and download tokens.
    public init(
        directory: URL, maxObjectSize: Int64 = 5 << 30, uploadLifetime: Int64 = 7 * 24 * 3600 * 1000,
        clock: @escaping @Sendable () -> Int64, makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) throws {
        self.directory = directory
        self.maxObjectSize = maxObjectSize
        self.uploadLifetime = uploadLifetime
        self.clock = clock
        self.makeID = makeID
        for folder in ["blobs", "tmp", "uploads"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: directory.appendingPathComponent("files.sqlite").path, configuration: configuration)
        try Self.migrator.migrate(pool)
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
        return migrator
    }

    // MARK: - Paths

    var blobFolder: URL { directory.appendingPathComponent("blobs") }
    var tmpFolder: URL { directory.appendingPathComponent("tmp") }
    var uploadFolder: URL { directory.appendingPathComponent("uploads") }

    /// Where `object`'s content is, for reading.
    public func contentPath(of object: StoredObject) -> String {
        blobFolder.appendingPathComponent(object.blob).path
    }

    // MARK: - Reading

    /// The object `name` in `bucket`, if it exists.
    public func object(bucket: String, name: String) throws -> StoredObject? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name])
                .map(Self.object(from:))
        }
    }

    /// The number of objects in `bucket`.
    public func count(bucket: String) throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM object WHERE bucket = ?", arguments: [bucket]) ?? 0 }
    }

    /// The buckets that hold objects.
    public func buckets() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT bucket FROM object ORDER BY bucket") }
    }

    // MARK: - Writing

    /// Checks a write before it happens: given the object as it would be (`request.resource`
    /// to storage rules) and the one it replaces (`resource`), throws to refuse it.
    public typealias Authorization = @Sendable (_ incoming: StoredObject, _ existing: StoredObject?) throws -> Void

    /// Stores `body` as the object `name` in `bucket`, replacing any object there.
    ///
    /// The content streams to a temporary file; `authorize` sees the finished object (its real
    /// size, type and hash) before it becomes visible. The new object gets a download token.
    /// - Throws: ``FilesError`` for a bad name, a body over ``maxObjectSize`` or a refusal.
    public func upload<Body: AsyncSequence>(
        bucket: String, name: String, fields: ObjectFields, body: Body, authorize: Authorization = { _, _ in }
    ) async throws -> StoredObject where Body.Element == ByteBuffer {
        let bucket = try ObjectName.validatedBucket(bucket)
        let name = try ObjectName.validated(name)
        let contentType = try fields.contentType.map(ObjectName.validatedContentType) ?? "application/octet-stream"
        let temporary = FilePath(tmpFolder.appendingPathComponent(makeID()).path)
        var writer = try await BlobWriter.open(temporary, limit: maxObjectSize)
        let md5: String
        do {
            for try await buffer in body { try await writer.append(buffer) }
            md5 = try await writer.finish()
        } catch {
            await writer.discard()
            throw error
        }
        var fields = fields
        fields.contentType = contentType
        do {
            return try await commit(
                bucket: bucket, name: name, fields: fields, size: writer.size, md5: md5, content: temporary, authorize: authorize)
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: temporary)
            throw error
        }
    }

    /// Makes the finished content file at `content` the object `name`: authorizes it, moves it
    /// into `blobs/` and records it, removing the content it replaces. On failure `content` is
    /// left where it is, for the caller to keep or remove.
    func commit(
        bucket: String, name: String, fields: ObjectFields, size: Int64, md5: String, content: FilePath,
        authorize: Authorization
    ) async throws -> StoredObject {
        let now = clock()
        let existing = try await blocking { [self] in try object(bucket: bucket, name: name) }
        var custom: [String: String] = [:]
        for (key, value) in fields.customMetadata ?? [:] { if let value { custom[key] = value } }
        let incoming = StoredObject(
            bucket: bucket, name: name, size: size, contentType: fields.contentType ?? "application/octet-stream",
            md5Hash: md5, generation: nextGeneration(now: now), metageneration: 1, timeCreated: now, updated: now,
            cacheControl: fields.cacheControl, contentDisposition: fields.contentDisposition,
            contentEncoding: fields.contentEncoding, contentLanguage: fields.contentLanguage, customMetadata: custom,
            downloadTokens: [makeID()], blob: makeID())
        try authorize(incoming, existing)
        let destination = FilePath(blobFolder.appendingPathComponent(incoming.blob).path)
        try await FileSystem.shared.moveItem(at: content, to: destination)
        let replaced: String? = try await blocking { [self] in
            Self.syncDirectory(blobFolder.path)
            return try pool.write { db in
                let previous = try String.fetchOne(
                    db, sql: "SELECT blob FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name])
                try Self.save(incoming, in: db)
                return previous
            }
        }
        if let replaced { removeBlob(replaced) }
        return incoming
    }

    /// Changes an object's metadata (not its content): each non-nil field of `fields` is set,
    /// custom metadata is merged (a nil value removes its key), and `downloadTokens`, when
    /// given, replaces the tokens.
    public func updateMetadata(
        bucket: String, name: String, fields: ObjectFields, downloadTokens: [String]? = nil,
        authorize: Authorization = { _, _ in }
    ) throws -> StoredObject {
        try pool.write { db in
            guard let existing = try Row.fetchOne(
                db, sql: "SELECT * FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name]
            ).map(Self.object(from:)) else { throw FilesError.notFound }
            var updated = existing
            if let type = fields.contentType { updated.contentType = try ObjectName.validatedContentType(type) }
            if let value = fields.cacheControl { updated.cacheControl = value.isEmpty ? nil : value }
            if let value = fields.contentDisposition { updated.contentDisposition = value.isEmpty ? nil : value }
            if let value = fields.contentEncoding { updated.contentEncoding = value.isEmpty ? nil : value }
            if let value = fields.contentLanguage { updated.contentLanguage = value.isEmpty ? nil : value }
            for (key, value) in fields.customMetadata ?? [:] { updated.customMetadata[key] = value }
            if let downloadTokens { updated.downloadTokens = downloadTokens }
            updated.metageneration += 1
            updated.updated = clock()
            try authorize(updated, existing)
            try Self.save(updated, in: db)
            return updated
        }
    }

    /// Deletes the object `name` in `bucket`.
    /// - Throws: ``FilesError/notFound`` when there is none; what `authorize` throws.
    public func delete(bucket: String, name: String, authorize: @Sendable (_ existing: StoredObject) throws -> Void = { _ in }) throws {
        let blob: String = try pool.write { db in
            guard let existing = try Row.fetchOne(
                db, sql: "SELECT * FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name]
            ).map(Self.object(from:)) else { throw FilesError.notFound }
            try authorize(existing)
            try db.execute(sql: "DELETE FROM object WHERE bucket = ? AND name = ?", arguments: [bucket, name])
            return existing.blob
        }
        removeBlob(blob)
    }

    // MARK: - Housekeeping

    /// What ``removeLeftovers()`` removed.
    public struct Leftovers: Sendable, Equatable {
        /// Content files no object points at (a crash between moving content and recording it).
        public var blobs = 0
        /// Unfinished simple uploads, and resumable uploads past their lifetime or unknown.
        public var uploads = 0

        public init(blobs: Int = 0, uploads: Int = 0) {
            self.blobs = blobs
            self.uploads = uploads
        }
    }

    /// Deletes what a crash or an abandoned upload left behind. Call it when the server starts,
    /// before it accepts requests (it must not run while another process writes to the store).
    @discardableResult
    public func removeLeftovers() throws -> Leftovers {
        var removed = Leftovers()
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: tmpFolder.path)) ?? [] {
            try? files.removeItem(at: tmpFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        let expiry = clock() - uploadLifetime
        let liveUploads: Set<String> = try pool.write { db in
            try db.execute(sql: "DELETE FROM upload WHERE created_at <= ?", arguments: [expiry])
            return Set(try String.fetchAll(db, sql: "SELECT id FROM upload WHERE status = 'active'"))
        }
        for name in (try? files.contentsOfDirectory(atPath: uploadFolder.path)) ?? [] where !liveUploads.contains(name) {
            try? files.removeItem(at: uploadFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        let referenced: Set<String> = try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT blob FROM object")) }
        for name in (try? files.contentsOfDirectory(atPath: blobFolder.path)) ?? [] where !referenced.contains(name) {
            try? files.removeItem(at: blobFolder.appendingPathComponent(name))
            removed.blobs += 1
        }
        return removed
    }

    // MARK: - Helpers

    /// A generation number after every earlier one: microseconds since the epoch, bumped on a tie.
    func nextGeneration(now: Int64) -> Int64 {
        lastGeneration.withLock { last in
            last = max(last + 1, now * 1000)
            return last
        }
    }

    func removeBlob(_ blob: String) {
        try? FileManager.default.removeItem(at: blobFolder.appendingPathComponent(blob))
    }

    /// Runs blocking work (SQLite, fsync) on NIO's thread pool rather than the cooperative pool.
    func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }

    /// Makes a rename in `path` durable.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }

    static func save(_ object: StoredObject, in db: GRDB.Database) throws {
        let custom = try String(decoding: JSONEncoder.sorted.encode(object.customMetadata), as: UTF8.self)
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO object (bucket, name, blob, size, content_type, md5, generation, metageneration,
                    time_created, updated, cache_control, content_disposition, content_encoding, content_language,
                    custom_metadata, download_tokens)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                object.bucket, object.name, object.blob, object.size, object.contentType, object.md5Hash, object.generation,
                object.metageneration, object.timeCreated, object.updated, object.cacheControl, object.contentDisposition,
                object.contentEncoding, object.contentLanguage, custom, object.downloadTokens.joined(separator: ","),
            ])
    }

    static func object(from row: Row) -> StoredObject {
        let customText: String = row["custom_metadata"]
        let custom = (try? JSONDecoder().decode([String: String].self, from: Data(customText.utf8))) ?? [:]
        let tokens: String = row["download_tokens"]
        return StoredObject(
            bucket: row["bucket"], name: row["name"], size: row["size"], contentType: row["content_type"], md5Hash: row["md5"],
            generation: row["generation"], metageneration: row["metageneration"], timeCreated: row["time_created"],
            updated: row["updated"], cacheControl: row["cache_control"], contentDisposition: row["content_disposition"],
            contentEncoding: row["content_encoding"], contentLanguage: row["content_language"], customMetadata: custom,
            downloadTokens: tokens.split(separator: ",").map(String.init), blob: row["blob"])
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
