import Foundation
import HearthAuth
import HearthCore
import HearthFiles
import HTTPTypes
import HearthEngine
import Hummingbird
import Logging
import NIOCore
import NIOFileSystem

/// Answers Firebase Storage's REST API (the one the Firebase SDKs use) under `/v0/b/<bucket>/o`:
///
/// - `POST /v0/b/<bucket>/o?name=<path>`: upload, simple (`uploadType=media`), multipart
///   (`X-Goog-Upload-Protocol: multipart`) or resumable (`X-Goog-Upload-Protocol: resumable`,
///   then `X-Goog-Upload-Command: upload`, `finalize`, `query` or `cancel` at the returned
///   `X-Goog-Upload-URL`);
/// - `GET /v0/b/<bucket>/o/<path>`: metadata, or with `alt=media` the content (ranges,
///   `ETag`, `Last-Modified`; `token=` a download token in place of the rules);
/// - `PATCH /v0/b/<bucket>/o/<path>`: metadata update; `DELETE`: delete;
/// - `GET /v0/b/<bucket>/o?prefix=&delimiter=/&pageToken=&maxResults=`: listing.
///
/// Storage rules decide every request but an admin's; refusals answer 403 in Firebase
/// Storage's error shape, `{"error": {"code": 403, "message": "…"}}`. An upload is judged by
/// what it declares (name, `Content-Length` or the resumable upload's size, type, custom
/// metadata) before the server keeps a byte of it, and again by what arrived before it
/// becomes visible. A resumable upload is continued only by whoever started it (see
/// ``HearthFiles/UploadOwner``); to anyone else it does not exist.
struct FilesResponder: Sendable {
    let store: FileStore
    let rules: StorageRules
    let admin: AdminCredential
    let issuer: TokenIssuer
    /// Refuses the tokens of accounts disabled, deleted or signed out everywhere.
    var gate: AccountGate? = nil
    let clock: @Sendable () -> Int64
    /// Whose word is taken for the scheme the browser used (upload URLs are built with it).
    let proxies: ProxyTrust

    static let prefix = "/v0/b/"
    /// The most metadata JSON a request may carry.
    static let maxMetadataBytes = 64 * 1024
    static let chunkGranularity = 256 * 1024

    static func handles(_ path: String) -> Bool { path.hasPrefix(prefix) }

    /// The answer to a storage request; `onAppOrigin` when it came to the app's own origin
    /// rather than a files origin (see ``FileContentPolicy``).
    /// The Storage API's routes; refusals are thrown, and written by ``StorageErrors``.
    /// `onAppOrigin` when requests come to the app's own origin rather than a files origin
    /// (see ``FileContentPolicy``).
    func responder(onAppOrigin: Bool) -> any HTTPResponder<HearthRequestContext> {
        let router = Router(context: HearthRequestContext.self)
        router.add(middleware: APIErrorMiddleware(StorageErrors()))
        typealias Handler = @Sendable (Request, HearthRequestContext, Asked) async throws -> Response
        /// Each route's handler gets the request's target, query and requester, worked out once.
        func asked(_ handler: @escaping Handler) -> RouteHandler {
            { request, context in
                let target = try Self.target(of: request)
                let parameters = Self.parameters(of: request)
                return try await handler(
                    request, context, Asked(target: target, parameters: parameters, requester: try await requester(request, parameters: parameters)))
            }
        }
        // A bucket's objects: list (GET) and upload (POST, or PUT as the JSON API allows).
        let upload: Handler = { request, context, asked in
            try await self.upload(
                request, bucket: asked.target.bucket, parameters: asked.parameters, requester: asked.requester, context: context)
        }
        router.endpoint(RouterPath(Self.prefix + "{bucket}/o"), [
            .get: asked { _, _, asked in try await list(asked.target.bucket, parameters: asked.parameters, requester: asked.requester) },
            .post: asked(upload),
            .put: asked(upload),
        ])
        // One object, whose name may hold slashes (encoded or not).
        let update: Handler = { request, _, asked in
            try await updateMetadata(request, bucket: asked.target.bucket, name: try asked.name(), requester: asked.requester)
        }
        router.endpoint(RouterPath(Self.prefix + "{bucket}/o/**"), [
            .get: asked { request, _, asked in
                try await get(
                    request, bucket: asked.target.bucket, name: try asked.name(), parameters: asked.parameters,
                    requester: asked.requester, onAppOrigin: onAppOrigin)
            },
            .patch: asked(update),
            // A PATCH as browsers without it send one.
            .put: asked { request, context, asked in
                guard request.headers[.methodOverride]?.lowercased() == "patch" else { throw HTTPError(.methodNotAllowed) }
                return try await update(request, context, asked)
            },
            // Download tokens: `?create_token=` or `?delete_token=`.
            .post: asked { _, _, asked in
                guard asked.parameters["create_token"] != nil || asked.parameters["delete_token"] != nil else {
                    throw HTTPError(.methodNotAllowed)
                }
                return try await tokens(bucket: asked.target.bucket, name: try asked.name(), parameters: asked.parameters, requester: asked.requester)
            },
            .delete: asked { _, _, asked in try await delete(bucket: asked.target.bucket, name: try asked.name(), requester: asked.requester) },
        ])
        return router.buildResponder()
    }

    /// What a request asks about, and who asks.
    struct Asked: Sendable {
        let target: Target
        let parameters: [String: String]
        let requester: Requester

        /// The object's name; an object route always has one.
        func name() throws -> String {
            guard let name = target.name else { throw FilesError.notFound }
            return name
        }
    }

    // MARK: - Routing

    struct Target: Sendable {
        let bucket: String
        /// The object's name, or nil for the bucket's object list.
        let name: String?
    }

    static func target(of request: Request) throws -> Target {
        let path = request.uri.path.dropFirst(Self.prefix.count)
        let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1] == "o", let bucket = String(parts[0]).removingPercentEncoding else {
            throw FilesError.notFound
        }
        guard parts.count == 3 else { return Target(bucket: bucket, name: nil) }
        guard let name = String(parts[2]).removingPercentEncoding else { throw FilesError.invalidName("bad percent-encoding") }
        return Target(bucket: bucket, name: name)
    }

    /// A request's query parameters; of a repeated one, the last.
    static func parameters(of request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        return parameters
    }

    // MARK: - Who asks

    /// An admin (rules do not apply), or a user judged by the rules with their token's claims
    /// (nil when signed out).
    enum Requester: Sendable {
        case admin
        case user(claims: Node?)
    }

    func requester(_ request: Request, parameters: [String: String]) async throws -> Requester {
        switch try await RequestAuth.resolve(request, parameters: parameters, admin: admin, issuer: issuer, gate: gate, now: clock()) {
        case .admin: return .admin
        case .rules(let auth, _):
            let claims = auth.child(ChildKey("token"))
            return .user(claims: claims.isNull ? nil : claims)
        }
    }

    /// Throws 403 unless the rules allow `method` on `name` for `requester`.
    private func authorize(
        _ method: StorageRulesDocument.Method, bucket: String, name: String, requester: Requester,
        incoming: StoredObject? = nil, existing: StoredObject? = nil
    ) throws(FilesError) {
        guard case .user(let claims) = requester else { return }
        let allowed = rules.allows(StorageRules.Request(
            method: method, bucket: bucket, name: name, authClaims: claims, time: clock(), incoming: incoming,
            existing: existing))
        guard allowed else {
            switch method {
            case .get: throw .permissionDenied("READ")
            case .list: throw .permissionDenied("LIST")
            case .create, .update, .delete: throw .permissionDenied("WRITE")
            }
        }
    }

    // MARK: - Listing

    private func list(_ bucket: String, parameters: [String: String], requester: Requester) async throws -> Response {
        let prefix = parameters["prefix"] ?? ""
        var ruleName = Substring(prefix)
        while ruleName.hasSuffix("/") { ruleName = ruleName.dropLast() }
        try authorize(.list, bucket: bucket, name: String(ruleName), requester: requester)
        var maxResults = 1000
        if let text = parameters["maxResults"] {
            guard let value = Int(text) else { throw FilesError.badRequest("maxResults must be a number.") }
            maxResults = value
        }
        let delimiter = parameters["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
        let listing = try await store.list(
            bucket: bucket, prefix: prefix, delimiter: delimiter, pageToken: parameters["pageToken"], maxResults: maxResults)
        let answer = ListAnswer(
            prefixes: listing.prefixes, items: listing.items.map { .init(name: $0.name, bucket: $0.bucket) },
            nextPageToken: listing.nextPageToken)
        return JSONResponse.encoding(answer, contentType: Self.contentType, pretty: true)
    }

    /// A listing, as Cloud Storage's `objects.list` writes it.
    struct ListAnswer: Encodable {
        struct Item: Encodable {
            var name: String
            var bucket: String
        }

        var prefixes: [String]
        var items: [Item]
        var nextPageToken: String?
    }

    // MARK: - Reading

    private func get(
        _ request: Request, bucket: String, name: String, parameters: [String: String], requester: Requester,
        onAppOrigin: Bool
    ) async throws -> Response {
        let object = try await store.object(bucket: bucket, name: name)
        let media = parameters["alt"] == "media"
        // A download token stands in for the rules: that is what makes a download URL shareable.
        let tokenGranted = media && object != nil && parameters["token"].map { object!.downloadTokens.contains($0) } == true
        if !tokenGranted { try authorize(.get, bucket: bucket, name: name, requester: requester, existing: object) }
        guard let object else { throw FilesError.notFound }
        guard media else { return Self.metadataResponse(object) }
        return try await ObjectDownload.response(object, store: store, request: request, onAppOrigin: onAppOrigin)
    }

    // MARK: - Writing

    private func upload(
        _ request: Request, bucket: String, parameters: [String: String], requester: Requester, context: HearthRequestContext
    ) async throws -> Response {
        let owner = uploadOwner(requester, request: request, context: context)
        if let id = parameters["upload_id"] {
            return try await resumableCommand(request, id: id, requester: requester, owner: owner)
        }
        let protocolName = (request.headers[.googUploadProtocol] ?? parameters["uploadType"] ?? "media").lowercased()
        switch protocolName {
        case "resumable":
            return try await startResumable(
                request, bucket: bucket, parameters: parameters, requester: requester, owner: owner,
                scheme: proxies.scheme(of: request, peer: context.remoteAddress))
        case "multipart":
            return try await multipartUpload(request, bucket: bucket, parameters: parameters, requester: requester)
        case "media", "raw":
            if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/") {
                return try await multipartUpload(request, bucket: bucket, parameters: parameters, requester: requester)
            }
            guard let name = parameters["name"] else { throw FilesError.badRequest("The object name is missing (name=).") }
            let fields = ObjectFields(contentType: request.headers[.contentType])
            // Judged by its Content-Length before the body is read, then by what arrived.
            let object = try await store.upload(
                bucket: bucket, name: name, fields: fields, declaredSize: try Self.contentLength(of: request), body: request.body,
                authorize: writeCheck(requester))
            return Self.metadataResponse(object)
        default:
            throw FilesError.badRequest("Unknown upload protocol '\(protocolName)'.")
        }
    }

    /// Who a resumable upload belongs to: the admin, the signed-in user, or a signed-out
    /// client by its address.
    private func uploadOwner(_ requester: Requester, request: Request, context: HearthRequestContext) -> UploadOwner {
        switch requester {
        case .admin: return .admin
        case .user(let claims):
            if let uid = claims.flatMap(Self.uid(claims:)) { return .user(uid) }
            return .signedOut(address: proxies.clientAddress(of: request, peer: context.remoteAddress))
        }
    }

    /// The uid in ID-token claims, as storage rules read it (`user_id`, else `sub`).
    static func uid(claims: Node) -> String? {
        for key in ["user_id", "sub"] {
            if case .string(let uid) = claims.child(ChildKey(key)).unprioritized, !uid.isEmpty { return uid }
        }
        return nil
    }

    /// The request's `Content-Length`, when it has one.
    static func contentLength(of request: Request) throws(FilesError) -> Int64? {
        guard let text = request.headers[.contentLength] else { return nil }
        guard let length = Int64(text), length >= 0 else { throw FilesError.badRequest("Invalid Content-Length.") }
        return length
    }

    /// The check a new object's content must pass: `create` by the rules (an overwrite too,
    /// as Firebase evaluates it), with `resource` the object it replaces.
    private func writeCheck(_ requester: Requester) -> FileStore.Authorization {
        { [self] incoming, existing in
            try authorize(.create, bucket: incoming.bucket, name: incoming.name, requester: requester, incoming: incoming, existing: existing)
        }
    }

    private func multipartUpload(
        _ request: Request, bucket: String, parameters: [String: String], requester: Requester
    ) async throws -> Response {
        guard let type = request.headers[.contentType], let boundary = MultipartUpload.boundary(in: type) else {
            throw FilesError.badRequest("A multipart upload needs a Content-Type with a boundary.")
        }
        let length = try Self.contentLength(of: request)
        let upload = MultipartUpload(boundary: boundary, body: request.body, maxMetadataBytes: Self.maxMetadataBytes)
        // The metadata part comes first: the upload is judged by it, and by the most the
        // content part can hold, before the content is read.
        let (metadata, contentType) = try await upload.readMetadata()
        var fields = try Self.fields(fromJSON: metadata)
        if fields.contentType == nil { fields.contentType = contentType }
        guard let name = parameters["name"] ?? Self.jsonName(metadata) else {
            throw FilesError.badRequest("The object name is missing (name= or the metadata's name).")
        }
        let object = try await store.upload(
            bucket: bucket, name: name, fields: fields, declaredSize: upload.contentSizeBound(contentLength: length),
            body: upload.content, authorize: writeCheck(requester))
        return Self.metadataResponse(object)
    }

    /// Starts a resumable upload, judged by the rules as declared (name, size, type, custom
    /// metadata) before anything is kept; the finished upload is judged again by what arrived.
    private func startResumable(
        _ request: Request, bucket: String, parameters: [String: String], requester: Requester, owner: UploadOwner,
        scheme: String
    ) async throws -> Response {
        let command = request.headers[.googUploadCommand]?.lowercased()
        guard command == nil || command == "start" else { throw FilesError.badRequest("A resumable upload starts with the start command.") }
        let metadata = try await Self.collect(request.body, limit: Self.maxMetadataBytes)
        var fields = metadata.isEmpty ? ObjectFields() : try Self.fields(fromJSON: metadata)
        if let type = request.headers[.googUploadContentType] ?? request.headers[.uploadContentType] { fields.contentType = type }
        guard let name = parameters["name"] ?? Self.jsonName(metadata) else {
            throw FilesError.badRequest("The object name is missing (name= or the metadata's name).")
        }
        let session = try await store.startUpload(
            bucket: bucket, name: name, fields: fields, declaredSize: try Self.declaredSize(request, metadata: metadata),
            owner: owner, authorize: writeCheck(requester))
        var headers = HTTPFields()
        headers[.googUploadURL] = uploadURL(request, session: session, scheme: scheme)
        headers[.googUploadStatus] = "active"
        headers[.googUploadChunkGranularity] = String(Self.chunkGranularity)
        headers[.guploadUploadID] = session.id
        return Response(status: .ok, headers: headers)
    }

    /// The total size a resumable upload's start declares: `X-Goog-Upload-Header-Content-Length`
    /// (or Cloud Storage's `X-Upload-Content-Length`), or the metadata's `size`.
    /// - Throws: 400 for a size that is not a number, or sizes that disagree.
    static func declaredSize(_ request: Request, metadata: [UInt8]) throws(FilesError) -> Int64? {
        var header: Int64?
        if let text = request.headers[.googUploadContentLength] ?? request.headers[.uploadContentLength] {
            guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                throw FilesError.badRequest("Invalid X-Goog-Upload-Header-Content-Length.")
            }
            header = value
        }
        let stated = try jsonSize(metadata)
        if let header, let stated, header != stated {
            throw FilesError.badRequest("The upload's declared sizes disagree (\(header) and \(stated)).")
        }
        return header ?? stated
    }

    /// The `size` of a metadata JSON object (a number, or a string of digits as Cloud Storage
    /// writes it), if it has one.
    static func jsonSize(_ bytes: [UInt8]) throws(FilesError) -> Int64? {
        guard !bytes.isEmpty, let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let value = json["size"], !(value is NSNull)
        else { return nil }
        let size: Int64?
        switch value {
        case let text as String: size = Int64(text)
        case let number as NSNumber: size = Int64(exactly: number.doubleValue)
        default: size = nil
        }
        guard let size, size >= 0 else { throw FilesError.badRequest("Invalid metadata: size must be a number of bytes.") }
        return size
    }

    private func uploadURL(_ request: Request, session: UploadSession, scheme: String) -> String {
        let host = request.head.authority ?? "localhost"
        let bucket = session.bucket.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? session.bucket
        let name = session.name.addingPercentEncoding(withAllowedCharacters: .urlQueryValueAllowed) ?? session.name
        return "\(scheme)://\(host)\(Self.prefix)\(bucket)/o?name=\(name)&upload_id=\(session.id)&upload_protocol=resumable"
    }

    /// A command at an upload URL. Only whoever started the upload (or an admin) may send
    /// one; anyone else is answered as for an unknown upload, so its existence stays hidden.
    private func resumableCommand(_ request: Request, id: String, requester: Requester, owner: UploadOwner) async throws -> Response {
        let commands = Set((request.headers[.googUploadCommand] ?? "")
            .lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard !commands.isEmpty else { throw FilesError.badRequest("X-Goog-Upload-Command is missing.") }
        if commands.contains("query") {
            guard let session = try await store.upload(id: id, for: owner) else { throw FilesError.notFound }
            var response = session.status == .final
                ? Self.metadataResponse(try await store.object(bucket: session.bucket, name: session.name) ?? Self.placeholder(session))
                : Response(status: .ok)
            response.headers[.googUploadStatus] = session.status.rawValue
            response.headers[.googUploadSizeReceived] = String(session.received)
            return response
        }
        if commands.contains("cancel") {
            try await store.cancelUpload(id: id, caller: owner)
            var response = Response(status: .ok)
            response.headers[.googUploadStatus] = "cancelled"
            return response
        }
        var received: Int64?
        if commands.contains("upload") {
            guard let offsetText = request.headers[.googUploadOffset], let offset = Int64(offsetText) else {
                throw FilesError.badRequest("X-Goog-Upload-Offset is missing or invalid.")
            }
            received = try await store.appendChunk(
                id: id, offset: offset, length: try Self.contentLength(of: request), caller: owner, body: request.body
            ).received
        }
        if commands.contains("finalize") {
            let object = try await store.finishUpload(id: id, caller: owner, authorize: writeCheck(requester))
            var response = Self.metadataResponse(object)
            response.headers[.googUploadStatus] = "final"
            response.headers[.googUploadSizeReceived] = String(object.size)
            return response
        }
        guard let received else { throw FilesError.badRequest("Unknown X-Goog-Upload-Command.") }
        var response = Response(status: .ok)
        response.headers[.googUploadStatus] = "active"
        response.headers[.googUploadSizeReceived] = String(received)
        return response
    }

    private static func placeholder(_ session: UploadSession) -> StoredObject {
        StoredObject(
            bucket: session.bucket, name: session.name, size: session.received, contentType: session.fields.contentType ?? "",
            md5Hash: "", generation: 0, timeCreated: session.createdAt, updated: session.createdAt, blob: "")
    }

    private func updateMetadata(_ request: Request, bucket: String, name: String, requester: Requester) async throws -> Response {
        let body = try await Self.collect(request.body, limit: Self.maxMetadataBytes)
        var fields = try Self.fields(fromJSON: body)
        let tokens = Self.takeDownloadTokens(from: &fields)
        // What is wrong with the request is said first, the same for every object; whether the
        // object exists is said only to someone the rules let read it.
        if let type = fields.contentType { _ = try ObjectName.validatedContentType(type) }
        guard try await store.object(bucket: bucket, name: name) != nil else {
            do {
                try authorize(.get, bucket: bucket, name: name, requester: requester, existing: nil)
            } catch {
                // Worded as a refused update of an object that exists is.
                throw FilesError.permissionDenied("WRITE")
            }
            throw FilesError.notFound
        }
        let object = try await store.updateMetadata(bucket: bucket, name: name, fields: fields, downloadTokens: tokens) { [self] updated, existing in
            try authorize(.update, bucket: bucket, name: name, requester: requester, incoming: updated, existing: existing)
        }
        return Self.metadataResponse(object)
    }

    /// `POST …/o/<name>?create_token=true` adds a download token; `?delete_token=<token>`
    /// removes one. Admins only, as in Firebase.
    private func tokens(bucket: String, name: String, parameters: [String: String], requester: Requester) async throws -> Response {
        guard case .admin = requester else { throw FilesError(.forbidden, "Missing admin credentials.") }
        guard let object = try await store.object(bucket: bucket, name: name) else { throw FilesError.notFound }
        var tokens = object.downloadTokens
        if let create = parameters["create_token"] {
            guard create == "true" else { throw FilesError.badRequest("create_token must be true.") }
            tokens.append(UUID().uuidString.lowercased())
        } else if let token = parameters["delete_token"] {
            tokens.removeAll { $0 == token }
        }
        return Self.metadataResponse(try await store.updateMetadata(bucket: bucket, name: name, fields: ObjectFields(), downloadTokens: tokens))
    }

    private func delete(bucket: String, name: String, requester: Requester) async throws -> Response {
        let existing = try await store.object(bucket: bucket, name: name)
        try authorize(.delete, bucket: bucket, name: name, requester: requester, existing: existing)
        try await store.delete(bucket: bucket, name: name)
        return Response(status: .noContent)
    }

    // MARK: - Bodies

    /// A small request body (metadata JSON), refused past `limit` bytes.
    static func collect(_ body: RequestBody, limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in body {
            guard bytes.count + buffer.readableBytes <= limit else { throw FilesError.badRequest("The metadata is too large.") }
            bytes += buffer.readableBytesView
        }
        return bytes
    }

    /// The fields of a metadata JSON object (`contentType`, `cacheControl`, …, `metadata`).
    static func fields(fromJSON bytes: [UInt8]) throws(FilesError) -> ObjectFields {
        if bytes.allSatisfy({ $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }) { return ObjectFields() }
        guard let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw FilesError.badRequest("Invalid metadata: a JSON object is expected.")
        }
        // Absent leaves a property as it is; null deletes it ("You can delete a metadata property
        // by setting it to null"), which the store reads as an empty string, as it does "".
        func text(_ key: String) throws(FilesError) -> String? {
            guard let value = json[key] else { return nil }
            if value is NSNull { return "" }
            guard let string = value as? String else { throw FilesError.badRequest("Invalid metadata: \(key) must be a string.") }
            return string
        }
        // An object always has a content type: deleting it leaves the default.
        let contentType = json["contentType"] is NSNull ? FileStore.defaultContentType : try text("contentType")
        var fields = ObjectFields(
            contentType: contentType, cacheControl: try text("cacheControl"),
            contentDisposition: try text("contentDisposition"), contentEncoding: try text("contentEncoding"),
            contentLanguage: try text("contentLanguage"))
        if let custom = json["metadata"], !(custom is NSNull) {
            guard let entries = custom as? [String: Any] else {
                throw FilesError.badRequest("Invalid metadata: metadata must be an object of strings.")
            }
            var merged: [String: String?] = [:]
            for (key, value) in entries {
                switch value {
                case is NSNull: merged[key] = .some(nil)
                case let string as String: merged[key] = string
                default: throw FilesError.badRequest("Invalid metadata: metadata.\(key) must be a string.")
                }
            }
            fields.customMetadata = merged
        }
        return fields
    }

    /// The custom metadata key Firebase keeps download tokens under (comma-separated).
    static let downloadTokensKey = StoredObject.downloadTokensKey

    /// The download tokens a metadata update sets through ``downloadTokensKey`` (empty or
    /// null: none), taken out of the custom metadata; nil when it does not set them.
    static func takeDownloadTokens(from fields: inout ObjectFields) -> [String]? {
        guard let value = fields.customMetadata?.removeValue(forKey: downloadTokensKey) else { return nil }
        return (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func jsonName(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        return json["name"] as? String
    }

    // MARK: - Responses

    static func metadataResponse(_ object: StoredObject) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=UTF-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: ObjectResource.json(object))))
    }

    /// Cloud Storage's JSON content type.
    static let contentType = "application/json; charset=UTF-8"
}

extension CharacterSet {
    /// Characters a query value may hold unencoded (`&`, `=`, `+` and `/` are encoded).
    static let urlQueryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+/?#")
        return set
    }()
}

extension HTTPField.Name {
    static let googUploadProtocol = Self("X-Goog-Upload-Protocol")!
    static let googUploadCommand = Self("X-Goog-Upload-Command")!
    static let googUploadContentType = Self("X-Goog-Upload-Header-Content-Type")!
    static let googUploadContentLength = Self("X-Goog-Upload-Header-Content-Length")!
    static let googUploadURL = Self("X-Goog-Upload-URL")!
    static let googUploadStatus = Self("X-Goog-Upload-Status")!
    static let googUploadChunkGranularity = Self("X-Goog-Upload-Chunk-Granularity")!
    static let googUploadSizeReceived = Self("X-Goog-Upload-Size-Received")!
    static let googUploadOffset = Self("X-Goog-Upload-Offset")!
    /// Cloud Storage's JSON API names for a resumable upload's declared size and type.
    static let uploadContentLength = Self("X-Upload-Content-Length")!
    static let uploadContentType = Self("X-Upload-Content-Type")!
    static let forwardedProto = Self("X-Forwarded-Proto")!
    static let guploadUploadID = Self("X-GUploader-UploadID")!
    static let methodOverride = Self("X-HTTP-Method-Override")!
}
