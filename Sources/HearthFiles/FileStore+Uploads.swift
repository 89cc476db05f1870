import Crypto
import Foundation
import NIOCore
import NIOFileSystem
import Synchronization

/// A resumable upload: started with the object's name and metadata, fed in chunks (each
/// starting where the last ended), then finished or cancelled. Its bytes so far are kept in
/// `uploads/<id>` and its record in the store's metadata, so it survives a dropped connection
/// and a restart (and, in a cluster, is continued by any node).
public struct UploadSession: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active, final, cancelled
    }

    public var id: String
    public var bucket: String
    public var name: String
    public var fields: ObjectFields
    /// The total size the client announced, if it did.
    public var declaredSize: Int64?
    /// Bytes received so far.
    public var received: Int64
    public var status: Status
    /// Milliseconds since the epoch.
    public var createdAt: Int64

    public init(
        id: String, bucket: String, name: String, fields: ObjectFields, declaredSize: Int64?, received: Int64, status: Status,
        createdAt: Int64
    ) {
        self.id = id
        self.bucket = bucket
        self.name = name
        self.fields = fields
        self.declaredSize = declaredSize
        self.received = received
        self.status = status
        self.createdAt = createdAt
    }
}



extension FileStore {
    /// Starts a resumable upload of `name` in `bucket`.
    /// - Parameter declaredSize: the total size, when the client says it (checked against the limit now).
    public func startUpload(
        bucket: String, name: String, fields: ObjectFields, declaredSize: Int64? = nil
    ) async throws -> UploadSession {
        let bucket = try ObjectName.validatedBucket(bucket)
        let name = try ObjectName.validated(name)
        var fields = fields
        fields.contentType = try fields.contentType.map(ObjectName.validatedContentType)
        if let declaredSize {
            guard declaredSize >= 0 else { throw FilesError.badRequest("Invalid upload size.") }
            guard declaredSize <= maxObjectSize else { throw FilesError.tooLarge(limit: maxObjectSize) }
        }
        let session = UploadSession(
            id: makeID(), bucket: bucket, name: name, fields: fields, declaredSize: declaredSize, received: 0,
            status: .active, createdAt: clock())
        let path = FilePath(uploadFolder.appendingPathComponent(session.id).path)
        let writer = try await BlobWriter.open(path, limit: maxObjectSize)
        try await writer.close()
        try await metadata.addUpload(session)
        return session
    }

    /// The upload `id` as it stands (its received size read from its file), or nil if unknown.
    public func upload(id: String) async throws -> UploadSession? {
        guard Self.isUploadID(id) else { return nil }
        let path = uploadFolder.appendingPathComponent(id).path
        guard var session = try await metadata.upload(id: id) else { return nil }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        session.received = size ?? 0
        return session
    }

    /// Appends `body` to the upload `id` at `offset`, which must be where the upload has got to.
    /// - Returns: the upload with its new received size.
    public func appendChunk<Body: AsyncSequence>(
        id: String, offset: Int64, body: Body
    ) async throws -> UploadSession where Body.Element == ByteBuffer {
        let session = try await activeUpload(id)
        guard offset == session.received else { throw FilesError.wrongOffset(expected: session.received) }
        try claim(id)
        defer { release(id) }
        let limit = min(maxObjectSize, session.declaredSize ?? maxObjectSize)
        var writer = try await BlobWriter.open(FilePath(uploadFolder.appendingPathComponent(id).path), at: offset, limit: limit)
        do {
            for try await buffer in body { try await writer.append(buffer) }
            try await writer.close()
        } catch {
            // What arrived before the failure stays: the client asks how far it got and goes on.
            try? await writer.close()
            throw error
        }
        var updated = session
        updated.received = writer.size
        return updated
    }

    /// Finishes the upload `id`: its bytes become the object (after `authorize`), as in
    /// ``upload(bucket:name:fields:body:authorize:)``.
    public func finishUpload(id: String, authorize: Authorization = { _, _ in }) async throws -> StoredObject {
        let session = try await activeUpload(id)
        if let declared = session.declaredSize, declared != session.received {
            throw FilesError.badRequest("The upload has \(session.received) of its \(declared) bytes.")
        }
        try claim(id)
        defer { release(id) }
        let source = FilePath(uploadFolder.appendingPathComponent(id).path)
        let md5 = try await Self.md5(of: source)
        // The content moves out of uploads/ under a new name, so a retried finish finds no file
        // to move twice; the record says final once the object is committed.
        let staged = FilePath(tmpFolder.appendingPathComponent(makeID()).path)
        try await FileSystem.shared.moveItem(at: source, to: staged)
        // Dated now: a sweep of shared files spares it while it becomes the object.
        touch(staged.string, now: clock())
        let object: StoredObject
        do {
            object = try await commit(
                bucket: session.bucket, name: session.name, fields: session.fields, size: session.received, md5: md5,
                content: staged, authorize: authorize)
        } catch {
            // Refused: the upload stays active with its bytes, as Cloud Storage keeps it.
            if (try? await FileSystem.shared.info(forFileAt: staged)) != nil {
                try? await FileSystem.shared.moveItem(at: staged, to: source)
            }
            throw error
        }
        try await metadata.setUpload(id: id, status: .final, generation: object.generation)
        return object
    }

    /// Cancels the upload `id` and deletes its bytes.
    public func cancelUpload(id: String) async throws {
        _ = try await activeUpload(id)
        try await metadata.setUpload(id: id, status: .cancelled, generation: nil)
        _ = try? await FileSystem.shared.removeItem(at: FilePath(uploadFolder.appendingPathComponent(id).path))
    }

    private func activeUpload(_ id: String) async throws -> UploadSession {
        guard let session = try await upload(id: id) else { throw FilesError.notFound }
        guard session.status == .active else { throw FilesError.uploadNotActive }
        return session
    }

    private func claim(_ id: String) throws {
        let claimed = busyUploads.withLock { $0.insert(id).inserted }
        guard claimed else { throw FilesError(status: 409, "Another request is writing to this upload.") }
    }

    private func release(_ id: String) {
        _ = busyUploads.withLock { $0.remove(id) }
    }

    /// Upload IDs are Hearth's own UUIDs: anything else names no upload (and no file).
    static func isUploadID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == UInt8(ascii: "-") }
    }

    /// The MD5 of the file at `path`, base64, read in chunks.
    static func md5(of path: FilePath) async throws -> String {
        var hasher = Insecure.MD5()
        try await FileSystem.shared.withFileHandle(forReadingAt: path) { handle in
            for try await chunk in handle.readChunks(chunkLength: .kibibytes(256)) {
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
        }
        return Data(hasher.finalize()).base64EncodedString()
    }
}
