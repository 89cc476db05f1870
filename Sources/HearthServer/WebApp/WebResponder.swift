import Foundation
import HearthCore
import HearthEngine
import Hummingbird
import Logging

/// Serves the web front end: the social app at `/` and the data console at `/console`, from
/// `WebFiles` (the copy compiled into the binary, or a folder given with `--web-root`). Every
/// file carries a strong ETag made from its bytes and `Cache-Control: no-cache`, so a page
/// revalidates each file (a 304 while it is unchanged) and picks up a changed one on the next
/// load. A folder's path serves its `index.html` (`/console` is sent to `/console/` first).
/// Also answers `/__/firebase/init.json` as Firebase Hosting does, so pages learn the project
/// and bucket.
struct WebResponder: Sendable {
    typealias Context = HearthRequestContext

    static let firebaseConfigPath = "/__/firebase/init.json"
    /// Firebase Hosting's auth pages: where providers come back to, and what emailed links open.
    static let authPages: Set<String> = ["/__/auth/handler", "/__/auth/action"]
    /// The one page that serves both auth pages.
    static let authPage = "__/auth/index.html"

    let files: WebFiles?
    private let config: [String: String]
    private let database: String

    /// - Parameters:
    ///   - files: the files holding `index.html`, `app/`, `lib/` and `console/`; nil serves no files.
    ///   - projectID: the project named in `init.json`.
    ///   - bucket: the storage bucket named in `init.json`.
    ///   - database: the database a hosted page's `databaseURL` names (`?ns=`).
    init(files: WebFiles?, projectID: String, bucket: String, database: String = "default") {
        self.files = files
        self.database = database
        config = [
            "projectId": projectID,
            "storageBucket": bucket,
            "apiKey": "hearth",
            // The page's own origin is the database, auth and storage server; clients fill it in.
            "databaseURL": "",
            "authDomain": "",
        ]
    }

    /// Firebase Hosting's `init.json`, plus `storageOrigin` (Hearth's own) when files are
    /// served from another origin than the page's.
    func firebaseConfig(filesOrigin: String?, origin: String? = nil) -> [UInt8] {
        let config = configValues(filesOrigin: filesOrigin, origin: origin)
        return (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes])).map(Array.init) ?? []
    }

    /// The values of `init.json`. With `origin` (`http://127.0.0.1:9000`, for an owner's hosted
    /// page, which fills in nothing itself) the database URL and auth domain name this server,
    /// so an unchanged page's `firebase.initializeApp(config)` talks to it; the database URL
    /// names the database (`?ns=`), which the SDKs would otherwise take from the host name.
    func configValues(filesOrigin: String?, origin: String? = nil) -> [String: String] {
        var config = self.config
        if let filesOrigin { config["storageOrigin"] = filesOrigin }
        if let origin {
            config["databaseURL"] = "\(origin)?ns=\(database)"
            config["authDomain"] = URL(string: origin).map { url in url.host.map { $0 + (url.port.map { ":\($0)" } ?? "") } ?? "" } ?? ""
        }
        return config
    }

    /// True for requests this responder answers: `GET`/`HEAD` of anything that is not a database
    /// resource (`….json`), plus the Hosting configuration.
    static func handles(_ request: Request) -> Bool {
        guard request.method == .get || request.method == .head else { return false }
        let path = request.uri.path
        // `/.hearth/` is the server's own API: never a page, so a wrong method there gets the
        // API's error rather than the app's 404 page.
        return path == firebaseConfigPath || (!path.hasSuffix(".json") && !path.hasPrefix("/.hearth/"))
    }

    /// The file at the request's path, or Firebase's 404 when there is none; `filesOrigin` is
    /// where pages are told to find files, when not on their own origin.
    /// Failures are thrown, and written by the namespace's ``RealtimeDatabaseErrors``.
    func respond(to request: Request, context: Context, filesOrigin: String?) async throws -> Response {
        let path = request.uri.path
        if path == Self.firebaseConfigPath {
            return JSONResponse.make(bytes: firebaseConfig(filesOrigin: filesOrigin))
        }
        guard let files else { throw HearthError(.notFound, "Not found.") }
        guard let decoded = path.removingPercentEncoding, !decoded.contains(".."), !decoded.contains("\0") else {
            throw HearthError(.invalidData, "Invalid path.")
        }
        let relative = decoded.split(separator: "/").joined(separator: "/")
        if Self.authPages.contains(path) {
            // One page serves both, as addressed (a redirect to add a slash would drop the query
            // the provider or the emailed link put there); it reads its path and query itself.
            if case .file(let file) = try await files.entry(at: Self.authPage) { return Self.response(file, to: request) }
        } else if decoded.hasSuffix("/") {
            let index = relative.isEmpty ? "index.html" : "\(relative)/index.html"
            if case .file(let file) = try await files.entry(at: index) { return Self.response(file, to: request) }
        } else {
            switch try await files.entry(at: relative) {
            case .file(let file): return Self.response(file, to: request)
            case .folder: return .redirect(to: "\(path)/", type: .permanent)
            case .none: break
            }
        }
        throw HearthError(.notFound, "Not found.")
    }

    /// `file` as `request` asks for it: whole, a range of it (`Range`, unless `If-Range` names
    /// another version), or 304 when the ETag the client has (`If-None-Match`) is still current.
    static func response(_ file: WebFile, to request: Request) -> Response {
        let size = file.bytes.readableBytes
        var headers = HTTPFields()
        headers[.contentLength] = "\(size)"
        headers[.eTag] = file.etag
        headers[.acceptRanges] = "bytes"
        if let contentType = file.contentType { headers[.contentType] = contentType }
        headers[.cacheControl] = "no-cache"
        if let tags = request.headers[.ifNoneMatch], matches(tags, file.etag) {
            return Response(status: .notModified, headers: headers)
        }
        guard request.method == .get else { return Response(status: .ok, headers: headers, body: .init()) }
        if let part = rangeResponse(of: file.bytes, etag: file.etag, to: request, headers: headers) { return part }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }

    /// Whether an `If-None-Match` list (`"a", W/"b"` or `*`) names `etag`; compared weakly, as
    /// RFC 9110 has it for this header.
    static func matches(_ tags: String, _ etag: String) -> Bool {
        tags.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/\(etag)"
        }
    }
}
