import Crypto
import Foundation
import NIOCore
import NIOFileSystem
import Synchronization

extension FileStore {
    /// Starts a resumable upload of `name` in `bucket` for `owner`.
    ///
    /// `authorize` judges the upload as declared (`declaredSize`, the fields' type and custom
    /// metadata) before anything is kept: a refused start leaves no record and no file. The
    /// finished upload is judged again with its real size and type by ``finishUpload(id:caller:authorize:)``.
    /// - Parameter declaredSize: the total size, when the client says it; chunks may not pass it.
    /// - Throws: ``FilesError`` for a bad name or type, a refusal, a size over ``maxObjectSize``,
    ///   or when the owner (``FilesError/tooManyUploads``) or the server
    ///   (``FilesError/uploadsFull``) has as many uploads open as ``uploadLimits`` allows.
    public func startUpload(
        bucket: String, name: String, fields: ObjectFields, declaredSize: Int64? = nil, owner: UploadOwner = .admin,
        authorize: Authorization = { _, _ in }
    ) async throws -> UploadSession {
        let bucket = try ObjectName.validatedBucket(bucket)
        let name = try ObjectName.validated(name)
        var fields = fields
        fields.contentType = try fields.contentType.map(ObjectName.validatedContentType)
        try await authorizeDeclared(bucket: bucket, name: name, fields: fields, declaredSize: declaredSize, authorize: authorize)
        _ = try Self.limit(declaredSize: declaredSize, maxObjectSize: maxObjectSize)
        let now = clock()
        let session = UploadSession(
            id: makeID(), bucket: bucket, name: name, fields: fields, declaredSize: declaredSize, received: 0,
            status: .active, createdAt: now, owner: owner, lastActiveAt: now)
        let path = FilePath(uploadFolder.appendingPathComponent(session.id).path)
        let writer = try await BlobWriter.open(path, limit: maxObjectSize)
        try await writer.close()
        do {
            try await metadata.addUpload(
                session, maxPerOwner: owner.quotaKey == nil ? .max : uploadLimits.maxOpenPerOwner, maxTotal: uploadLimits.maxOpen)
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: path)
            throw error
        }
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

    /// The upload `id` when `caller` may continue it (see ``UploadOwner/admits(_:)``); nil
    /// when it is unknown or someone else's, which callers answer alike.
    public func upload(id: String, for caller: UploadOwner) async throws -> UploadSession? {
        guard let session = try await upload(id: id) else { return nil }
        // An upload recorded before owners were is only an admin's to continue.
        guard session.owner?.admits(caller) ?? (caller == .admin) else { return nil }
        return session
    }

    /// Appends `body` to the upload `id` at `offset`, which must be where the upload has got to.
    ///
    /// The bytes may not take the upload past its declared size (400) or, without one,
    /// ``maxObjectSize`` (413): a chunk whose `length` says it would is refused before any of
    /// it is read, and a body that turns out longer is cut off before the excess is written.
    /// - Parameters:
    ///   - length: the chunk's size, when the request says it (`Content-Length`).
    ///   - caller: who asks; an upload they may not continue is ``FilesError/notFound``.
    /// - Returns: the upload with its new received size.
    public func appendChunk<Body: AsyncSequence>(
        id: String, offset: Int64, length: Int64? = nil, caller: UploadOwner = .admin, body: Body
    ) async throws -> UploadSession where Body.Element == ByteBuffer {
        let session = try await activeUpload(id, caller: caller)
        guard offset == session.received else { throw FilesError.wrongOffset(expected: session.received) }
        let limit = try Self.limit(declaredSize: session.declaredSize, maxObjectSize: maxObjectSize)
        if let length, length > limit.bytes - offset { throw limit.overflow }
        try claim(id)
        defer { release(id) }
        try await metadata.touchUpload(id: id, at: clock())
        var writer = try await BlobWriter.open(
            FilePath(uploadFolder.appendingPathComponent(id).path), at: offset, limit: limit.bytes, overflow: limit.overflow,
            pending: pending)
        do {
            for try await buffer in body { try await writer.append(buffer) }
            try await writer.close()
        } catch {
            // What arrived before the failure stays (and counts against the pending bytes):
            // the client asks how far it got and goes on.
            try? await writer.close()
            try? await metadata.touchUpload(id: id, at: clock())
            throw error
        }
        // A slow chunk is activity until its end.
        try? await metadata.touchUpload(id: id, at: clock())
        var updated = session
        updated.received = writer.size
        return updated
    }

    /// Finishes the upload `id`: its bytes become the object (after `authorize`), as in
    /// ``upload(bucket:name:fields:declaredSize:body:authorize:)``.
    ///
    /// An upload `authorize` refuses ends there: its bytes are deleted at once and it is
    /// cancelled. One short of its declared size stays, for the client to go on.
    /// - Parameter caller: who asks; an upload they may not continue is ``FilesError/notFound``.
    public func finishUpload(
        id: String, caller: UploadOwner = .admin, authorize: Authorization = { _, _ in }
    ) async throws -> StoredObject {
        let session = try await activeUpload(id, caller: caller)
        if let declared = session.declaredSize, declared != session.received {
            throw FilesError.badRequest("The upload has \(session.received) of its \(declared) bytes.")
        }
        try claim(id)
        defer { release(id) }
        let source = FilePath(uploadFolder.appendingPathComponent(id).path)
        let digests = try await Self.digests(of: source)
        // The content moves out of uploads/ under a new name, so a retried finish finds no file
        // to move twice; the record says final once the object is committed.
        let staged = FilePath(tmpFolder.appendingPathComponent(makeID()).path)
        try await FileSystem.shared.moveItem(at: source, to: staged)
        // Dated now: a sweep of shared files spares it while it becomes the object.
        touch(staged.string, now: clock())
        let object: StoredObject
        do {
            object = try await commit(
                bucket: session.bucket, name: session.name, fields: session.fields, size: session.received, digests: digests,
                content: staged
            ) { incoming, existing in
                do {
                    try authorize(incoming, existing)
                } catch {
                    throw Refusal(reason: error)
                }
            }
        } catch let refusal as Refusal {
            // Refused by the rules: nothing the client sends can change that, so the bytes go now
            // rather than when the upload expires.
            _ = try? await FileSystem.shared.removeItem(at: staged)
            pending.release(session.received)
            try? await metadata.setUpload(id: id, status: .cancelled, generation: nil)
            throw refusal.reason
        } catch {
            if (try? await FileSystem.shared.info(forFileAt: staged)) != nil {
                try? await FileSystem.shared.moveItem(at: staged, to: source)
            }
            throw error
        }
        // The bytes are an object's now, no longer an unfinished upload's.
        pending.release(session.received)
        try await metadata.setUpload(id: id, status: .final, generation: object.generation)
        return object
    }

    /// Cancels the upload `id` and deletes its bytes.
    /// - Parameter caller: who asks; an upload they may not continue is ``FilesError/notFound``.
    public func cancelUpload(id: String, caller: UploadOwner = .admin) async throws {
        _ = try await activeUpload(id, caller: caller)
        try await metadata.setUpload(id: id, status: .cancelled, generation: nil)
        removeUploadFile(id)
    }

    /// What an upload's `authorize` threw, told apart from the failures around it.
    private struct Refusal: Error {
        let reason: any Error
    }

    private func activeUpload(_ id: String, caller: UploadOwner) async throws -> UploadSession {
        guard let session = try await upload(id: id, for: caller) else { throw FilesError.notFound }
        guard session.status == .active else { throw FilesError.uploadNotActive }
        return session
    }

    /// Deletes the upload `id`'s file, counting its bytes out of the pending ones.
    /// - Returns: the bytes it held.
    @discardableResult
    func removeUploadFile(_ id: String) -> Int64 {
        let url = uploadFolder.appendingPathComponent(id)
        let size = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
        guard (try? FileManager.default.removeItem(at: url)) != nil else { return 0 }
        pending.release(size)
        return size
    }

    private func claim(_ id: String) throws {
        let claimed = busyUploads.withLock { $0.insert(id).inserted }
        guard claimed else { throw FilesError(.conflict, "Another request is writing to this upload.") }
    }

    private func release(_ id: String) {
        _ = busyUploads.withLock { $0.remove(id) }
    }

    /// Upload IDs are Hearth's own UUIDs: anything else names no upload (and no file).
    static func isUploadID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) || $0 == UInt8(ascii: "-") }
    }

    /// The MD5 and CRC-32C of the file at `path`, read in chunks.
    static func digests(of path: FilePath) async throws -> ContentDigests {
        var md5 = Insecure.MD5()
        var crc32c = CRC32C()
        try await FileSystem.shared.withFileHandle(forReadingAt: path) { handle in
            for try await chunk in handle.readChunks(chunkLength: .kibibytes(256)) {
                chunk.withUnsafeReadableBytes { bytes in
                    md5.update(bufferPointer: bytes)
                    crc32c.update(bytes)
                }
            }
        }
        return ContentDigests(md5: Data(md5.finalize()).base64EncodedString(), crc32c: crc32c.base64)
    }
}
