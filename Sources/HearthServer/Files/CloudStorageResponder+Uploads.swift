import Foundation
import HearthFiles
import Hummingbird

extension CloudStorageResponder {
    /// `POST /upload/storage/v1/b/<bucket>/o?uploadType=…`: the content in the body (`media`,
    /// named by `name=`), metadata and content in one `multipart/related` body (`multipart`), or
    /// the start of a resumable upload (`resumable`).
    func upload(_ call: Call) async throws -> Response {
        let request = call.request
        let preconditions = try Self.preconditions(call.parameters)
        switch (call.parameters["uploadType"] ?? "media").lowercased() {
        case "media":
            guard let name = call.parameters["name"] else { throw FilesError.badRequest("The object name is missing (name=).") }
            var fields = ObjectFields(contentType: request.headers[.contentType])
            fields.contentEncoding = call.parameters["contentEncoding"]
            let object = try await store.upload(
                bucket: call.bucket, name: name, fields: fields, declaredSize: try FilesResponder.contentLength(of: request),
                body: request.body, authorize: Self.writeCheck(preconditions))
            return Self.resource(object, call)
        case "multipart":
            guard let type = request.headers[.contentType], let boundary = MultipartUpload.boundary(in: type) else {
                throw FilesError.badRequest("A multipart upload needs a Content-Type with a boundary.")
            }
            let upload = MultipartUpload(boundary: boundary, body: request.body, maxMetadataBytes: FilesResponder.maxMetadataBytes)
            // The metadata part comes first: the upload is judged by it, and by the most the
            // content part can hold, before the content is read.
            let (metadata, contentType) = try await upload.readMetadata()
            var fields = try FilesResponder.fields(fromJSON: metadata)
            if fields.contentType == nil { fields.contentType = contentType }
            fields.downloadTokens = FilesResponder.takeDownloadTokens(from: &fields)
            guard let name = call.parameters["name"] ?? FilesResponder.jsonName(metadata) else {
                throw FilesError.badRequest("The object name is missing (name= or the metadata's name).")
            }
            let object = try await store.upload(
                bucket: call.bucket, name: name, fields: fields,
                declaredSize: upload.contentSizeBound(contentLength: try FilesResponder.contentLength(of: request)), body: upload.content,
                authorize: Self.writeCheck(preconditions, digests: try Self.digests(inJSON: metadata)))
            return Self.resource(object, call)
        case "resumable":
            return try await startResumable(call, preconditions: preconditions)
        case let other:
            throw FilesError.badRequest("Unknown uploadType '\(other)'.")
        }
    }

    /// Starts a resumable upload: the body is the object's metadata, `X-Upload-Content-Type`
    /// and `X-Upload-Content-Length` its type and size. The answer's `Location` is where the
    /// chunks go; it carries the request's conditions, which the last chunk is held to.
    private func startResumable(_ call: Call, preconditions: ObjectPreconditions) async throws -> Response {
        let request = call.request
        let metadata = try await FilesResponder.collect(request.body, limit: FilesResponder.maxMetadataBytes)
        var fields = try FilesResponder.fields(fromJSON: metadata)
        if let type = request.headers[.uploadContentType] { fields.contentType = fields.contentType ?? type }
        fields.downloadTokens = FilesResponder.takeDownloadTokens(from: &fields)
        guard let name = call.parameters["name"] ?? FilesResponder.jsonName(metadata) else {
            throw FilesError.badRequest("The object name is missing (name= or the metadata's name).")
        }
        let session = try await store.startUpload(
            bucket: call.bucket, name: name, fields: fields,
            declaredSize: try FilesResponder.declaredSize(request, metadata: metadata), owner: .admin,
            authorize: Self.writeCheck(preconditions))
        // The conditions as read (numbers), never the request's text.
        var query = "uploadType=resumable&upload_id=\(session.id)"
        for (key, value) in [
            ("ifGenerationMatch", preconditions.ifGenerationMatch), ("ifGenerationNotMatch", preconditions.ifGenerationNotMatch),
            ("ifMetagenerationMatch", preconditions.ifMetagenerationMatch),
            ("ifMetagenerationNotMatch", preconditions.ifMetagenerationNotMatch),
        ] {
            if let value { query += "&\(key)=\(value)" }
        }
        var headers = HTTPFields()
        headers[.location] = "\(call.base)\(Self.uploadPrefix)b/\(CloudObjectResource.encoded(call.bucket))/o?\(query)"
        headers[.guploadUploadID] = session.id
        return Response(status: .ok, headers: headers)
    }

    /// `PUT` at an upload URL: a chunk (`Content-Range: bytes a-b/total`, total `*` while not
    /// known), or no bytes (`bytes */*`, `bytes */total`) to ask how far the upload got. The
    /// answer is 308 with `Range: bytes=0-<last>` until the upload has its total, then the object.
    /// A chunk that starts before what the upload has (sent again) is taken from there on.
    func resumableChunk(_ call: Call) async throws -> Response {
        let request = call.request
        let id = try Self.uploadID(call)
        guard let session = try await store.upload(id: id, for: .admin), session.bucket == call.bucket else {
            throw FilesError(.notFound, "No such upload.")
        }
        let length = try FilesResponder.contentLength(of: request)
        let range: UploadContentRange
        if let header = request.headers[.contentRange] {
            guard let parsed = UploadContentRange(header) else { throw FilesError.badRequest("Invalid Content-Range: \(header.debugDescription).") }
            range = parsed
        } else {
            // The whole rest of the upload in one request.
            guard let length else { throw FilesError.badRequest("A chunk needs a Content-Range or a Content-Length.") }
            range = UploadContentRange(
                bytes: length > 0 ? session.received...(session.received + length - 1) : nil, total: session.received + length)
        }
        if let length, length != range.length {
            throw FilesError.badRequest("Content-Length (\(length)) and Content-Range (\(range.length) bytes) disagree.")
        }
        if let total = range.total, let declared = session.declaredSize, total != declared {
            throw FilesError.badRequest("The upload's declared size is \(declared), not \(total).")
        }
        if session.status == .final {
            guard let object = try await store.object(bucket: session.bucket, name: session.name) else { throw FilesError.uploadNotActive }
            return Self.resource(object, call)
        }
        guard session.status == .active else { throw FilesError.uploadNotActive }
        var received = session.received
        if let bytes = range.bytes {
            guard bytes.lowerBound <= received else {
                throw FilesError.badRequest("The chunk starts at \(bytes.lowerBound); the upload has \(received) bytes.")
            }
            if bytes.upperBound >= received {
                let skip = received - bytes.lowerBound
                received = try await store.appendChunk(
                    id: id, offset: received, length: bytes.upperBound + 1 - received, caller: .admin,
                    body: ChunkBody(base: request.body, skip: skip, limit: bytes.upperBound + 1 - received)
                ).received
            }
        }
        guard let total = range.total, received == total else {
            var headers = HTTPFields()
            if received > 0 { headers[.range] = "bytes=0-\(received - 1)" }
            return Response(status: .permanentRedirect, headers: headers)
        }
        let digests = try Self.digests(inHeader: request.headers[.googHash])
        let object = try await store.finishUpload(
            id: id, caller: .admin, authorize: Self.writeCheck(try Self.preconditions(call.parameters), digests: digests))
        return Self.resource(object, call)
    }

    /// `DELETE` at an upload URL cancels the upload, answered 499 as Cloud Storage does.
    func cancelResumable(_ call: Call) async throws -> Response {
        let id = try Self.uploadID(call)
        guard let session = try await store.upload(id: id, for: .admin), session.bucket == call.bucket else {
            throw FilesError(.notFound, "No such upload.")
        }
        try await store.cancelUpload(id: id, caller: .admin)
        return Response(status: HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"))
    }

    private static func uploadID(_ call: Call) throws(FilesError) -> String {
        guard let id = call.parameters["upload_id"] else { throw .badRequest("upload_id is missing.") }
        return id
    }

    /// The checksums an upload's metadata gives (`md5Hash`, `crc32c`).
    static func digests(inJSON bytes: [UInt8]) throws(FilesError) -> ExpectedDigests {
        guard !bytes.isEmpty, let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            return ExpectedDigests()
        }
        func text(_ key: String) throws(FilesError) -> String? {
            guard let value = json[key], !(value is NSNull) else { return nil }
            guard let string = value as? String else { throw .badRequest("Invalid metadata: \(key) must be a string.") }
            return string
        }
        return ExpectedDigests(md5: try text("md5Hash"), crc32c: try text("crc32c"))
    }

    /// The checksums of an `X-Goog-Hash` header (`crc32c=…,md5=…`).
    static func digests(inHeader header: String?) throws(FilesError) -> ExpectedDigests {
        var digests = ExpectedDigests()
        for part in (header ?? "").split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { throw .badRequest("Invalid X-Goog-Hash.") }
            switch pair[0].lowercased() {
            case "md5": digests.md5 = String(pair[1])
            case "crc32c": digests.crc32c = String(pair[1])
            default: break
            }
        }
        return digests
    }
}
