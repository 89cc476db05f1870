import Foundation

/// Where a ``FileStore`` keeps its metadata (objects and resumable uploads); the content stays
/// in files under the store's folder. ``SQLiteFileMetadata`` keeps it beside the content (one
/// node); a cluster keeps it in the PostgreSQL its nodes share, with the folder mounted by
/// every node.
///
/// Read-modify-writes (``put(_:)``, ``update(bucket:name:_:)``, ``delete(bucket:name:authorize:)``)
/// are one transaction each. Their closures must only compute: a store whose transaction lost a
/// race to another node may run them again. Names compare by their UTF-8 bytes.
public protocol FileMetadataStorage: Sendable {
    // MARK: Objects

    /// The object `name` in `bucket`, if it exists.
    func object(bucket: String, name: String) async throws -> StoredObject?
    /// The number of objects in `bucket`.
    func count(bucket: String) async throws -> Int
    /// The buckets that hold objects, in order.
    func buckets() async throws -> [String]
    /// Records `object`, replacing the one with its bucket and name. Its generation is raised
    /// past the replaced object's when it is not already (another node's clock may be ahead).
    /// - Returns: the object as recorded, and the content file of the object it replaced.
    func put(_ object: StoredObject) async throws -> (object: StoredObject, replacedBlob: String?)
    /// Reads the object, lets `change` make its new version (or throw to refuse), and records
    /// that, in one transaction.
    /// - Throws: ``FilesError/notFound`` when there is no such object; what `change` throws.
    func update(
        bucket: String, name: String, _ change: @escaping @Sendable (StoredObject) throws -> StoredObject
    ) async throws -> StoredObject
    /// Removes the object after `authorize` accepts it, in one transaction.
    /// - Returns: the removed object (its content file is the caller's to remove).
    /// - Throws: ``FilesError/notFound`` when there is no such object; what `authorize` throws.
    func delete(
        bucket: String, name: String, authorize: @escaping @Sendable (StoredObject) throws -> Void
    ) async throws -> StoredObject
    /// Up to `limit` objects of `bucket` in name order whose names are after `after` (or, when
    /// it is nil, from `from` on) and before `before` (when given).
    func objects(bucket: String, after: String?, from: String, before: String?, limit: Int) async throws -> [StoredObject]
    /// Which of `blobs` (content file names) an object points at.
    func referencedBlobs(among blobs: [String]) async throws -> Set<String>

    // MARK: Resumable uploads

    /// Records a new upload (its received size is read from its file, not stored), unless its
    /// owner already has `maxPerOwner` active uploads or `maxTotal` are active, in one step
    /// (two nodes starting uploads at once cannot both take the last place).
    /// - Throws: ``FilesError/tooManyUploads`` or ``FilesError/uploadsFull``.
    func addUpload(_ session: UploadSession, maxPerOwner: Int, maxTotal: Int) async throws
    /// The upload `id` (with `received` 0), if it is known.
    func upload(id: String) async throws -> UploadSession?
    /// Sets an upload's status, and the generation of the object it became (when final).
    func setUpload(id: String, status: UploadSession.Status, generation: Int64?) async throws
    /// Notes that the upload `id` received a chunk at `time` (milliseconds since the epoch).
    func touchUpload(id: String, at time: Int64) async throws
    /// Forgets the uploads made at or before `createdAtOrBefore`, and the active ones last
    /// active at or before `lastActiveAtOrBefore`, but not those in `sparing`.
    /// - Returns: the IDs of the active uploads forgotten (their files are the caller's to remove).
    func removeUploads(
        createdAtOrBefore: Int64, lastActiveAtOrBefore: Int64, sparing: Set<String>
    ) async throws -> [String]
    /// Which of `ids` are active uploads.
    func activeUploads(among ids: [String]) async throws -> Set<String>
}

extension FileMetadataStorage {
    /// Records a new upload, however many others there are.
    public func addUpload(_ session: UploadSession) async throws {
        try await addUpload(session, maxPerOwner: .max, maxTotal: .max)
    }

    /// Forgets the uploads made at or before `time` (milliseconds since the epoch).
    public func removeUploads(createdAtOrBefore time: Int64) async throws {
        _ = try await removeUploads(createdAtOrBefore: time, lastActiveAtOrBefore: .min, sparing: [])
    }
}
