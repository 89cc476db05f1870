import Foundation
import HearthAuth
import HearthEngine
import HearthFiles
import Hummingbird

/// Answers Cloud Storage's JSON API over Hearth's file store, for server code that uses
/// google-cloud-storage or `firebase_admin.storage` with `STORAGE_EMULATOR_HOST`:
///
/// - `GET /storage/v1/b`, `GET /storage/v1/b/<bucket>`: buckets;
/// - `GET /storage/v1/b/<bucket>/o?prefix=&delimiter=&maxResults=&pageToken=&startOffset=&endOffset=`: listing;
/// - `GET|PATCH|PUT|DELETE /storage/v1/b/<bucket>/o/<object>`: metadata (with `alt=media` the
///   content), a metadata patch or update, delete;
/// - `POST …/o/<object>/copyTo/b/<bucket>/o/<object>`, `…/rewriteTo/…` (done in one call), `…/o/<object>/compose`;
/// - `GET /download/storage/v1/b/<bucket>/o/<object>?alt=media`: the content (ranges);
/// - `POST /upload/storage/v1/b/<bucket>/o?uploadType=media|multipart|resumable`, then for a
///   resumable upload `PUT` chunks at the `Location` it answered (`Content-Range`, 308 with
///   `Range` until the last), `bytes */*` to ask how far it got, `DELETE` to cancel.
///
/// Admins only (``CloudStorageAccess``): storage rules do not apply. Everything else is the
/// Firebase Storage API's: the same ``HearthFiles/FileStore`` operations with their limits,
/// ``ObjectDownload`` and ``FileContentPolicy`` for content, ``MultipartUpload`` for multipart
/// bodies; conditions on versions are ``HearthFiles/ObjectPreconditions`` and checksums
/// ``HearthFiles/ExpectedDigests``. Errors are written by ``CloudStorageErrors``.
struct CloudStorageResponder: Sendable {
    let store: FileStore
    let admin: AdminCredential
    let issuer: TokenIssuer
    /// Emulator mode: requests without a credential are an admin's, as in Firebase's emulator.
    let emulator: Bool
    /// The project's bucket (`<project>.appspot.com`), listed even while it holds nothing.
    let defaultBucket: String
    let clock: @Sendable () -> Int64
    /// Whose word is taken for the scheme the client used (links and upload URLs are built with it).
    let proxies: ProxyTrust

    static let apiPrefix = "/storage/v1/"
    static let uploadPrefix = "/upload/storage/v1/"
    static let downloadPrefix = "/download/storage/v1/"

    static func handles(_ path: String) -> Bool {
        path.hasPrefix(apiPrefix) || path.hasPrefix(uploadPrefix) || path.hasPrefix(downloadPrefix)
    }

    /// The API's routes; `onAppOrigin` when requests come to the app's own origin rather than
    /// a files origin (see ``FileContentPolicy``).
    func responder(onAppOrigin: Bool) -> any HTTPResponder<HearthRequestContext> {
        let router = Router(context: HearthRequestContext.self)
        router.add(middleware: APIErrorMiddleware(CloudStorageErrors()))
        router.add(middleware: CloudStorageAccess(admin: admin, issuer: issuer, emulator: emulator, clock: clock))
        typealias Handler = @Sendable (Call) async throws -> Response
        func call(_ handler: @escaping Handler) -> RouteHandler {
            { request, context in try await handler(try Call(request: request, context: context, proxies: proxies)) }
        }
        let object = "b/{bucket}/o/{object}"
        router.endpoint(RouterPath(Self.apiPrefix + "b"), .get, call { try await buckets($0) })
        router.endpoint(RouterPath(Self.apiPrefix + "b/{bucket}"), .get, call { try await bucket($0) })
        router.endpoint(RouterPath(Self.apiPrefix + "b/{bucket}/o"), .get, call { try await list($0) })
        router.endpoint(RouterPath(Self.apiPrefix + object), [
            .get: call { try await get($0, onAppOrigin: onAppOrigin) },
            .patch: call { try await updateMetadata($0, replacing: false) },
            .put: call { try await updateMetadata($0, replacing: true) },
            .delete: call { try await delete($0) },
        ])
        router.endpoint(RouterPath(Self.apiPrefix + object + "/copyTo/b/{destinationBucket}/o/{destinationObject}"), .post, call {
            try await copy($0, rewrite: false)
        })
        router.endpoint(RouterPath(Self.apiPrefix + object + "/rewriteTo/b/{destinationBucket}/o/{destinationObject}"), .post, call {
            try await copy($0, rewrite: true)
        })
        router.endpoint(RouterPath(Self.apiPrefix + object + "/compose"), .post, call { try await compose($0) })
        router.endpoint(RouterPath(Self.downloadPrefix + object), .get, call { try await download($0, onAppOrigin: onAppOrigin) })
        router.endpoint(RouterPath(Self.uploadPrefix + "b/{bucket}/o"), [
            .post: call { try await upload($0) },
            .put: call { try await resumableChunk($0) },
            .delete: call { try await cancelResumable($0) },
        ])
        return router.buildResponder()
    }

    /// What a handler reads of its request, worked out once.
    struct Call: Sendable {
        let request: Request
        let context: HearthRequestContext
        /// The query parameters (of a repeated one, the last).
        let parameters: [String: String]
        /// This server as the client reached it, `scheme://host[:port]`, for links.
        let base: String
        /// The route's bucket, checked.
        let bucket: String

        init(request: Request, context: HearthRequestContext, proxies: ProxyTrust) throws {
            self.request = request
            self.context = context
            parameters = FilesResponder.parameters(of: request)
            base = "\(proxies.scheme(of: request, peer: context.remoteAddress))://\(request.head.authority ?? "localhost")"
            bucket = try context.parameters.get("bucket").map { try ObjectName.validatedBucket(try Self.decoded($0)) } ?? ""
        }

        /// The route's object name (a path segment, `/` encoded as `%2F`).
        func name(_ parameter: String = "object") throws -> String {
            guard let raw = context.parameters.get(parameter) else { throw FilesError.notFound }
            return try Self.decoded(raw)
        }

        /// The route's destination bucket (copy and rewrite), checked.
        func destinationBucket() throws -> String {
            try ObjectName.validatedBucket(try Self.decoded(context.parameters.get("destinationBucket") ?? ""))
        }

        private static func decoded(_ segment: some StringProtocol) throws(FilesError) -> String {
            guard let text = String(segment).removingPercentEncoding else { throw FilesError.invalidName("bad percent-encoding") }
            return text
        }
    }

    // MARK: - Shared pieces

    /// No object `name` in `bucket`, in Cloud Storage's words.
    static func noSuchObject(_ bucket: String, _ name: String) -> FilesError {
        FilesError(.notFound, "No such object: \(bucket)/\(name)")
    }

    /// The object `name` in `call`'s bucket, at `generation` if that names one.
    /// - Throws: 404 when there is none (Hearth keeps no older generations).
    func existing(_ call: Call, name: String, generation: String?) async throws -> StoredObject {
        guard let object = try await store.object(bucket: call.bucket, name: name) else { throw Self.noSuchObject(call.bucket, name) }
        if let generation, Int64(generation) != object.generation { throw Self.noSuchObject(call.bucket, name) }
        return object
    }

    /// The version conditions among `parameters` (`ifGenerationMatch` …; with `source`, the
    /// `ifSource…` ones of a copy).
    /// - Throws: 400 for one that is not a number.
    static func preconditions(_ parameters: [String: String], source: Bool = false) throws(FilesError) -> ObjectPreconditions {
        let prefix = source ? "ifSource" : "if"
        func number(_ condition: String) throws(FilesError) -> Int64? {
            // google-cloud-storage spells one of them `ifMetaGenerationNotMatch` on uploads.
            let name = prefix + condition
            guard let text = parameters[name] ?? parameters[name.replacingOccurrences(of: "Metageneration", with: "MetaGeneration")]
            else { return nil }
            guard let value = Int64(text), value >= 0 else { throw .badRequest("Invalid value for \(name): \(text.debugDescription).") }
            return value
        }
        return ObjectPreconditions(
            ifGenerationMatch: try number("GenerationMatch"), ifGenerationNotMatch: try number("GenerationNotMatch"),
            ifMetagenerationMatch: try number("MetagenerationMatch"), ifMetagenerationNotMatch: try number("MetagenerationNotMatch"))
    }

    /// The check new content must pass: the request's conditions on the object it replaces, and
    /// the checksums the client gave for it.
    static func writeCheck(_ preconditions: ObjectPreconditions, digests: ExpectedDigests = ExpectedDigests()) -> FileStore.Authorization {
        { incoming, existing in
            try preconditions.check(existing)
            try digests.check(incoming)
        }
    }

    /// `value` as the JSON API writes it.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        JSONResponse.encoding(value, status: status, headers: headers, contentType: FilesResponder.contentType, pretty: true)
    }

    static func resource(_ object: StoredObject, _ call: Call) -> Response {
        json(CloudObjectResource(object, base: call.base))
    }
}
