import Foundation
import HearthCore
import HearthEngine
import Hummingbird
import Logging

/// Serves the web front end: the social app at `/` and the data console at `/console`, plain
/// files from one folder (the bundled `Web/` unless `--web-root` names another), with ETags and
/// revalidation so a changed file is picked up on the next load. Also answers
/// `/__/firebase/init.json` as Firebase Hosting does, so pages learn the project and bucket.
struct WebResponder: Sendable {
    typealias Context = HearthRequestContext

    static let firebaseConfigPath = "/__/firebase/init.json"
    /// Firebase Hosting's auth pages: where providers come back to, and what emailed links open.
    static let authPages: Set<String> = ["/__/auth/handler", "/__/auth/action"]

    private let files: FileMiddleware<Context, LocalFileSystem>?
    private let config: [String: String]

    /// - Parameters:
    ///   - root: the folder holding `index.html`, `app/`, `lib/` and `console/`; nil serves no files.
    ///   - projectID: the project named in `init.json`.
    ///   - bucket: the storage bucket named in `init.json`.
    init(root: URL?, projectID: String, bucket: String, logger: Logger) {
        files = root.map { root in
            FileMiddleware(
                root.path, cacheControl: CacheControl([(MediaType(type: .any), [CacheControl.Value.noCache])]), searchForIndexHtml: true, logger: logger)
        }
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
    func firebaseConfig(filesOrigin: String?) -> [UInt8] {
        var config = self.config
        if let filesOrigin { config["storageOrigin"] = filesOrigin }
        return (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes])).map(Array.init) ?? []
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
    func respond(to request: Request, context: Context, filesOrigin: String?) async -> Response {
        if request.uri.path == Self.firebaseConfigPath {
            return JSONResponse.make(bytes: firebaseConfig(filesOrigin: filesOrigin))
        }
        guard let files else { return HearthError(.notFound, "Not found.").response() }
        var request = request
        if Self.authPages.contains(request.uri.path) {
            // One page serves both, as addressed (a redirect to add a slash would drop the query
            // the provider or the emailed link put there); it reads its path and query itself.
            var head = request.head
            head.path = "/__/auth/index.html"
            request = Request(head: head, body: request.body)
        }
        do {
            // The middleware serves a file when what comes after it finds nothing.
            return try await files.handle(request, context: context) { _, _ in throw HTTPError(.notFound) }
        } catch let error as any HTTPResponseError {
            if error.status == .notFound { return HearthError(.notFound, "Not found.").response() }
            // A path with `..` or bad percent encoding.
            return HearthError(.invalidData, "Invalid path.").response()
        } catch {
            context.logger.requestFailed("web file failed", error: error)
            return HearthError(.internalError, "Internal server error.").response()
        }
    }
}
