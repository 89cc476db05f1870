import Crypto
import Foundation
import HearthOutbox
import NIOCore
import NIOFileSystem
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files by bucket and path: content in files named by Hearth under `blobs/`, metadata in a
/// ``FileMetadataStorage``: SQLite beside the content (`files.sqlite`, WAL, `synchronous=FULL`)
/// for one node, or the PostgreSQL a cluster shares, with the folder mounted by every node.
///
/// A file appears only when complete: content streams into `tmp/` (or `uploads/` for
/// resumable uploads), is synced, renamed into `blobs/`, and only then does a committed row
/// point at it. A crash at any moment leaves at worst an unreferenced file, which
/// ``removeLeftovers()`` deletes when a single node starts (and
/// ``removeLeftovers(keepingNewerThan:)`` when its files are shared by other nodes).
///
/// Unfinished uploads are bounded (``UploadLimits``): an upload is judged by what it declares
/// before a byte of it is kept, its bytes may not pass what it declared, resumable uploads
/// are continued only by their ``UploadOwner`` and counted per owner and in all, the bytes
/// unfinished uploads hold together are capped, and ``removeExpiredUploads()`` removes
/// resumable uploads past their lifetime or idle too long.
public final class FileStore: Sendable {
    /// The folder holding everything (a data folder's `files/`).
    public let directory: URL
    /// The largest object accepted, in bytes.
    public let maxObjectSize: Int64
    /// What unfinished uploads may hold, and how long they are kept.
    public let uploadLimits: UploadLimits
    /// How long an unfinished resumable upload is kept after it started (ms); Cloud Storage
    /// keeps them a week.
    public var uploadLifetime: Int64 { uploadLimits.lifetime }
    /// Where objects and uploads are recorded.
    public let metadata: any FileMetadataStorage

    /// Where storage triggers' events wait (a single node's metadata keeps them); nil in a cluster.
    public var outbox: SQLiteOutbox? { (metadata as? SQLiteFileMetadata)?.outbox }
    /// The metadata when it is this node's own SQLite file (what ``removeLeftovers()`` needs).
    let local: SQLiteFileMetadata?
    let clock: @Sendable () -> Int64
    let makeID: @Sendable () -> String
    private let lastGeneration = Mutex<Int64>(0)
    /// Resumable uploads a request of this process is writing to right now.
    let busyUploads = Mutex<Set<String>>([])
    /// The bytes unfinished uploads hold, against ``UploadLimits/maxPendingBytes``.
    let pending: PendingBytes

    /// Opens (creating if needed) the store in `directory`, its metadata in `files.sqlite` there.
    /// - Parameters:
    ///   - clock: milliseconds since the epoch.
    ///   - makeID: unique names for content files, uploads and download tokens.
    ///   - eventRecorder: decides which events each change records (storage triggers).
    public convenience init(
        directory: URL, maxObjectSize: Int64 = 5 << 30, uploadLimits: UploadLimits = UploadLimits(),
        clock: @escaping @Sendable () -> Int64, makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() },
        eventRecorder: (any FileEventRecorder)? = nil
    ) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let local = try SQLiteFileMetadata(path: directory.appendingPathComponent("files.sqlite").path, recorder: eventRecorder)
        try self.init(
            directory: directory, metadata: local, local: local, maxObjectSize: maxObjectSize, uploadLimits: uploadLimits,
            clock: clock, makeID: makeID)
    }

    /// Opens the store with its content in `directory` and its metadata in `metadata` (in a
    /// cluster: a folder every node mounts, and ``FileMetadataStorage`` in the shared database).
    public convenience init(
        directory: URL, metadata: any FileMetadataStorage, maxObjectSize: Int64 = 5 << 30,
        uploadLimits: UploadLimits = UploadLimits(), clock: @escaping @Sendable () -> Int64,
        makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) throws {
        try self.init(
            directory: directory, metadata: metadata, local: nil, maxObjectSize: maxObjectSize, uploadLimits: uploadLimits,
            clock: clock, makeID: makeID)
    }

    private init(
        directory: URL, metadata: any FileMetadataStorage, local: SQLiteFileMetadata?, maxObjectSize: Int64,
        uploadLimits: UploadLimits, clock: @escaping @Sendable () -> Int64, makeID: @escaping @Sendable () -> String
    ) throws {
        self.directory = directory
        self.metadata = metadata
        self.local = local
        self.maxObjectSize = maxObjectSize
        self.uploadLimits = uploadLimits
        self.clock = clock
        self.makeID = makeID
        for folder in ["blobs", "tmp", "uploads"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        pending = PendingBytes(
            limit: uploadLimits.maxPendingBytes,
            used: Self.bytes(in: directory.appendingPathComponent("uploads")) + Self.bytes(in: directory.appendingPathComponent("tmp")))
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
    public func object(bucket: String, name: String) async throws -> StoredObject? {
        try await metadata.object(bucket: bucket, name: name)
    }

    /// The number of objects in `bucket`.
    public func count(bucket: String) async throws -> Int {
        try await metadata.count(bucket: bucket)
    }

    /// The buckets that hold objects.
    public func buckets() async throws -> [String] {
        try await metadata.buckets()
    }

    // MARK: - Writing

    /// Checks a write before it happens: given the object as it would be (`request.resource`
    /// to storage rules) and the one it replaces (`resource`), throws to refuse it.
    public typealias Authorization = @Sendable (_ incoming: StoredObject, _ existing: StoredObject?) throws -> Void

    /// Stores `body` as the object `name` in `bucket`, replacing any object there.
    ///
    /// `authorize` first sees the object as the client declares it (`declaredSize`, the
    /// fields' type and metadata), before a byte of `body` is read: a refused upload writes
    /// nothing. The content then streams to a temporary file, refused as soon as it passes
    /// `declaredSize` or ``maxObjectSize``, and `authorize` sees the finished object (its real
    /// size, type and hash) before it becomes visible. The new object gets a download token.
    /// - Parameter declaredSize: the size the client announced (`Content-Length`), if it did.
    /// - Throws: ``FilesError`` for a bad name, a refusal, a body over `declaredSize` (400) or
    ///   ``maxObjectSize`` (413), or when unfinished uploads hold all they may (503).
    public func upload<Body: AsyncSequence>(
        bucket: String, name: String, fields: ObjectFields, declaredSize: Int64? = nil, body: Body,
        authorize: Authorization = { _, _ in }
    ) async throws -> StoredObject where Body.Element == ByteBuffer {
        let bucket = try ObjectName.validatedBucket(bucket)
        let name = try ObjectName.validated(name)
        var fields = fields
        fields.contentType = try fields.contentType.map(ObjectName.validatedContentType) ?? Self.defaultContentType
        try await authorizeDeclared(bucket: bucket, name: name, fields: fields, declaredSize: declaredSize, authorize: authorize)
        let limit = try Self.limit(declaredSize: declaredSize, maxObjectSize: maxObjectSize)
        let temporary = FilePath(tmpFolder.appendingPathComponent(makeID()).path)
        var writer = try await BlobWriter.open(
            temporary, limit: limit.bytes, overflow: limit.overflow, pending: pending)
        let digests: ContentDigests
        do {
            for try await buffer in body { try await writer.append(buffer) }
            digests = try await writer.finish()
        } catch {
            await writer.discard()
            throw error
        }
        // Committed or removed, the bytes leave tmp/.
        defer { pending.release(writer.written) }
        do {
            return try await commit(
                bucket: bucket, name: name, fields: fields, size: writer.size, digests: digests, content: temporary, authorize: authorize)
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: temporary)
            throw error
        }
    }

    /// Judges an upload by what the client declares, before it sends the content: `authorize`
    /// sees `request.resource` with the declared size and the fields (no MD5 yet), and
    /// `resource` the object it would replace.
    ///
    /// Without a declared size the content's size is not known until it has arrived: the
    /// upload goes on when the rules allow it empty or at ``maxObjectSize`` (the most it may
    /// hold), and the finished object is judged again with its real size.
    func authorizeDeclared(
        bucket: String, name: String, fields: ObjectFields, declaredSize: Int64?, authorize: Authorization
    ) async throws {
        let existing = try await metadata.object(bucket: bucket, name: name)
        let now = clock()
        func judge(size: Int64) throws {
            try authorize(incoming(bucket: bucket, name: name, fields: fields, size: size, digests: nil, now: now), existing)
        }
        guard let declaredSize else {
            do {
                try judge(size: 0)
            } catch {
                guard (try? judge(size: maxObjectSize)) != nil else { throw error }
            }
            return
        }
        try judge(size: max(0, declaredSize))
    }

    /// The most bytes an upload that declared `declaredSize` may send, and what passing it throws.
    /// - Throws: 400 for a negative size; ``FilesError/tooLarge(limit:)`` for one over `maxObjectSize`.
    static func limit(declaredSize: Int64?, maxObjectSize: Int64) throws(FilesError) -> (bytes: Int64, overflow: FilesError) {
        guard let declaredSize else { return (maxObjectSize, .tooLarge(limit: maxObjectSize)) }
        guard declaredSize >= 0 else { throw .badRequest("Invalid upload size.") }
        guard declaredSize <= maxObjectSize else { throw .tooLarge(limit: maxObjectSize) }
        return (declaredSize, .overDeclaredSize(declaredSize))
    }

    /// The content type of an object that was given none, or whose type was deleted.
    public static let defaultContentType = "application/octet-stream"

    /// The object an upload would make (`request.resource` to storage rules): a new
    /// generation, a download token and a content file name of its own; without `digests`
    /// (before its content arrived) its `md5Hash` is empty and it has no `crc32c`.
    func incoming(bucket: String, name: String, fields: ObjectFields, size: Int64, digests: ContentDigests?, now: Int64) -> StoredObject {
        var custom: [String: String] = [:]
        for (key, value) in fields.customMetadata ?? [:] { if let value { custom[key] = value } }
        // An empty property (sent as "" or null) is no property.
        func set(_ value: String?) -> String? { value?.isEmpty == false ? value : nil }
        return StoredObject(
            bucket: bucket, name: name, size: size, contentType: fields.contentType ?? Self.defaultContentType,
            md5Hash: digests?.md5 ?? "", crc32c: digests?.crc32c, generation: nextGeneration(now: now), metageneration: 1, timeCreated: now, updated: now,
            cacheControl: set(fields.cacheControl), contentDisposition: set(fields.contentDisposition),
            contentEncoding: set(fields.contentEncoding), contentLanguage: set(fields.contentLanguage), customMetadata: custom,
            downloadTokens: fields.downloadTokens ?? [makeID()], blob: makeID())
    }

    /// Makes the finished content file at `content` the object `name`: authorizes it, moves it
    /// into `blobs/` and records it, removing the content it replaces. On failure `content` is
    /// left where it is, for the caller to keep or remove.
    func commit(
        bucket: String, name: String, fields: ObjectFields, size: Int64, digests: ContentDigests, content: FilePath,
        authorize: Authorization
    ) async throws -> StoredObject {
        let now = clock()
        let existing = try await metadata.object(bucket: bucket, name: name)
        let incoming = incoming(bucket: bucket, name: name, fields: fields, size: size, digests: digests, now: now)
        try authorize(incoming, existing)
        // Dated now, so that a sweep of shared files (which spares recent ones) leaves it alone
        // until its record is committed.
        touch(content.string, now: now)
        let destination = FilePath(blobFolder.appendingPathComponent(incoming.blob).path)
        try await FileSystem.shared.moveItem(at: content, to: destination)
        try await blocking { [blobFolder] in Self.syncDirectory(blobFolder.path) }
        let (recorded, replaced) = try await metadata.put(incoming)
        if let replaced { removeBlob(replaced) }
        return recorded
    }

    /// Changes an object's metadata (not its content): each non-nil field of `fields` is set,
    /// custom metadata is merged (a nil value removes its key), and `downloadTokens`, when
    /// given, replaces the tokens.
    public func updateMetadata(
        bucket: String, name: String, fields: ObjectFields, downloadTokens: [String]? = nil,
        authorize: @escaping Authorization = { _, _ in }
    ) async throws -> StoredObject {
        try await metadata.update(bucket: bucket, name: name) { [clock] existing in
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
            return updated
        }
    }

    /// Deletes the object `name` in `bucket`.
    /// - Throws: ``FilesError/notFound`` when there is none; what `authorize` throws.
    public func delete(
        bucket: String, name: String, authorize: @escaping @Sendable (_ existing: StoredObject) throws -> Void = { _ in }
    ) async throws {
        let removed = try await metadata.delete(bucket: bucket, name: name, authorize: authorize)
        removeBlob(removed.blob)
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

    /// Sets the file's modification time to `now` (milliseconds since the epoch).
    func touch(_ path: String, now: Int64) {
        try? FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: Double(now) / 1000)], ofItemAtPath: path)
    }

    /// Runs blocking work (fsync) on NIO's thread pool rather than the cooperative pool.
    func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }

    /// The bytes the files directly in `folder` hold.
    static func bytes(in folder: URL) -> Int64 {
        let files = FileManager.default
        return ((try? files.contentsOfDirectory(atPath: folder.path)) ?? []).reduce(0) { total, name in
            let size = (try? files.attributesOfItem(atPath: folder.appendingPathComponent(name).path))?[.size] as? NSNumber
            return total + (size?.int64Value ?? 0)
        }
    }

    /// Makes a rename in `path` durable.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
