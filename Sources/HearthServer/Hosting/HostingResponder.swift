import Foundation
import HearthFunctions
import HearthHosting
import Hummingbird
import NIOCore

/// Serves an owner's Firebase web app (`hearth serve --hosting`) as Firebase Hosting does:
/// ``HostingResolver`` decides (Firebase's order of precedence), this answers — files as a CDN
/// would (strong ETags and 304s, `Cache-Control` from the owner's `headers` or Firebase's
/// default, gzip and Brotli for text, single ranges, `HEAD`), redirects, function rewrites
/// through the functions' own responder, the site's `404.html` — and the reserved URLs:
/// `/__/firebase/init.js` and `init.json` (this server's configuration), the SDK at
/// `/__/firebase/<version>/<file>` (from the SDK folder, or a redirect to Google's copy) and the
/// auth pages (`/__/auth/…`, as the web responder serves them).
///
/// Responses carry none of Hearth's security headers (``SecurityHeaders/Kind/hosted``): only
/// what the owner's `headers` set. A `….json` path is the database's unless the site has that
/// exact file (`manifest.json`): rewrites and redirects never take data requests.
struct HostingResponder: Sendable {
    typealias Context = HearthRequestContext

    /// Where the app comes from.
    enum Source: Sendable {
        /// A folder served as it is on disk (`--hosting`).
        case folder(HostingDeployment)
        /// The live release of those deployed with `hearth hosting deploy`.
        case releases(HostingReleaseWatcher)
    }

    let source: Source
    /// The address people reach the app at, when set: `init.js` names it rather than the
    /// request's host.
    let publicURL: String?
    let proxies: ProxyTrust
    private let cache = HostedFileCache()

    /// Where pages are sent for a Firebase SDK version the SDK folder lacks.
    static let sdkOrigin = "https://www.gstatic.com/firebasejs"
    /// The `Cache-Control` of the reserved configuration URLs: always revalidated.
    static let configCacheControl = "no-cache"
    /// The `Cache-Control` of SDK files, whose URLs name their version.
    static let sdkCacheControl = "public, max-age=31536000"

    init(source: Source, publicURL: String?, proxies: ProxyTrust) {
        self.source = source
        self.publicURL = publicURL
        self.proxies = proxies
    }

    /// What is served now; nil when nothing is deployed (the demo app answers then).
    func deployment() -> HostingDeployment? {
        switch source {
        case .folder(let deployment): deployment
        case .releases(let watcher): watcher.current()
        }
    }

    /// True for the requests the hosted app takes: every path but the database's (`….json`
    /// with a method other than `GET` or `HEAD`, or asking for an event stream) and the console.
    static func handles(_ request: Request) -> Bool {
        let path = request.uri.path
        if path == "/console" || path.hasPrefix("/console/") { return false }
        guard path.hasSuffix(".json"), !path.hasPrefix("/__/") else { return true }
        guard request.method == .get || request.method == .head else { return false }
        return request.headers[.accept]?.contains("text/event-stream") != true
    }

    /// True for a CORS preflight (`OPTIONS`) of a path the site rewrites to a function: the
    /// function answers it, as on Firebase, rather than the server's own preflight.
    func takesPreflight(_ request: Request) -> Bool {
        guard request.method == .options, !request.uri.path.hasSuffix(".json"), let deployment = deployment() else { return false }
        return deployment.site(forHost: request.head.authority).resolver.rewritesToFunction(request.uri.path)
    }

    /// The answer to `request`. `database` answers the `….json` paths the site has no file for;
    /// `functions` calls a function a rewrite names; `web` serves the auth pages and `init.json`.
    func respond(
        to request: Request, context: Context, web: WebResponder, functions: FunctionsResponder?, filesOrigin: String?,
        database: @Sendable (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let deployment = deployment() else { return Self.notFound(headers: []) }
        do {
            return try await respond(
                to: request, from: deployment, context: context, web: web, functions: functions, filesOrigin: filesOrigin, database: database)
        } catch is ReleaseGone {
            // The release this request took was pruned meanwhile (deploys kept fewer): the live
            // one answers instead.
            guard let live = self.deployment() else { return Self.notFound(headers: []) }
            return try await respond(
                to: request, from: live, context: context, web: web, functions: functions, filesOrigin: filesOrigin, database: database)
        }
    }

    /// A miss in a release whose files are gone.
    private struct ReleaseGone: Error {}

    private func respond(
        to request: Request, from deployment: HostingDeployment, context: Context, web: WebResponder, functions: FunctionsResponder?,
        filesOrigin: String?, database: @Sendable (Request, Context) async throws -> Response
    ) async throws -> Response {
        let site = deployment.site(forHost: request.head.authority)
        let path = request.uri.path
        if try await isConsoleModule(path, request: request, site: site.files, web: web) {
            context.note.update { $0.headers = .page(filesOrigin: filesOrigin) }
            return try await web.respond(to: request, context: context, filesOrigin: filesOrigin)
        }
        let decision = try await site.resolver.resolve(
            HostingRequest(method: request.method.rawValue, path: path, query: request.uri.query), files: site.files)
        if path.hasSuffix(".json"), !path.hasPrefix("/__/") {
            // Data, unless the site has exactly this file.
            guard case .file(let file, 200) = decision.action, "/" + file == HostingPath.normalize(path) else {
                context.note.update {
                    $0.transport = .rest
                    $0.headers = .api
                    $0.crossOrigin = true
                }
                return try await database(request, context)
            }
        }
        switch decision.action {
        case .reserved(let reserved):
            return try await respondReserved(
                reserved, to: request, context: context, web: web, filesOrigin: filesOrigin, sdkFolder: deployment.settings.sdkFolder)
        case .file(let file, let status):
            guard let location = try await site.files.location(of: file),
                let hosted = try await cache.file(at: location, unchanging: deployment.release != nil)
            else {
                if deployment.isGone { throw ReleaseGone() }
                return Self.notFound(headers: decision.headers)
            }
            return try await Self.response(hosted, status: status, to: request, headers: decision.headers)
        case .redirect(let location, let status):
            return Response(status: .init(code: status), headers: [.location: location, .contentLength: "0"])
        case .function(let name, let region):
            guard let functions, let function = functions.functions.httpFunctions[name], region == nil || region == function.region else {
                return Self.plain(.notFound, "The function \(name) is not running on this server.", headers: decision.headers)
            }
            // The functions' own route (`/<project>/<region>/<name>/<path>`), with the path the
            // page asked for, as Firebase passes it.
            var head = request.head
            head.path = "/\(functions.projectID)/\(function.region)/\(name)\(path)" + (request.uri.query.map { "?\($0)" } ?? "")
            context.note.update { $0.transport = .functions }
            var response = try await functions.respond(to: Request(head: head, body: request.body), context: context, rewrite: true)
            Self.apply(decision.headers, to: &response.headers)
            return response
        case .notFound:
            if deployment.isGone { throw ReleaseGone() }
            return Self.notFound(headers: decision.headers)
        case .methodNotAllowed:
            return Self.plain(.methodNotAllowed, "Method not allowed.", headers: [HostingHeader(name: "Allow", value: "GET, HEAD")])
        case .badRequest:
            return Self.plain(.badRequest, "Bad request: this path cannot be served.")
        }
    }

    /// Whether `path` is one of the console's shared modules (`/app/…`, `/lib/…`, which its
    /// pages import by those absolute paths) that the owner's site has no file for: those stay
    /// Hearth's, so the console works beside the app; a file of the site's own always wins.
    private func isConsoleModule(_ path: String, request: Request, site: HostingFolderFiles, web: WebResponder) async throws -> Bool {
        guard request.method == .get || request.method == .head, path.hasPrefix("/app/") || path.hasPrefix("/lib/"),
            let files = web.files, let normalized = HostingPath.normalize(path)
        else { return false }
        let relative = String(normalized.dropFirst())
        guard case .file = try await files.entry(at: relative) else { return false }
        return try await !site.isFile(relative)
    }

    // MARK: - Reserved URLs

    private func respondReserved(
        _ path: String, to request: Request, context: Context, web: WebResponder, filesOrigin: String?, sdkFolder: URL?
    ) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            return Self.plain(.methodNotAllowed, "Method not allowed.", headers: [HostingHeader(name: "Allow", value: "GET, HEAD")])
        }
        let origin = publicURL ?? "\(proxies.scheme(of: request, peer: context.remoteAddress))://\(request.head.authority ?? "localhost")"
        switch path {
        case "/__/firebase/init.json":
            let file = HostedFile(path: "init.json", bytes: web.firebaseConfig(filesOrigin: filesOrigin, origin: origin))
            return Self.response(file, status: 200, to: request, headers: [HostingHeader(name: "Cache-Control", value: Self.configCacheControl)])
        case "/__/firebase/init.js":
            let file = HostedFile(path: "init.js", bytes: Self.initScript(web.configValues(filesOrigin: filesOrigin, origin: origin), origin: origin))
            return Self.response(file, status: 200, to: request, headers: [HostingHeader(name: "Cache-Control", value: Self.configCacheControl)])
        case _ where path.hasPrefix("/__/auth/"):
            // Hearth's own pages, with the pages' policy.
            context.note.update { $0.headers = .page(filesOrigin: filesOrigin) }
            return try await web.respond(to: request, context: context, filesOrigin: filesOrigin)
        case _ where path.hasPrefix("/__/firebase/"):
            let parts = path.dropFirst("/__/firebase/".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, Self.isVersion(parts[0]), Self.isFileName(parts[1]) else { break }
            let (version, name) = (String(parts[0]), String(parts[1]))
            if let location = Self.sdkLocation(in: sdkFolder, version: version, file: name), let file = try await cache.file(at: location) {
                return try await Self.response(file, status: 200, to: request, headers: [HostingHeader(name: "Cache-Control", value: Self.sdkCacheControl)])
            }
            return Response(status: .found, headers: [.location: "\(Self.sdkOrigin)/\(version)/\(name)", .contentLength: "0"])
        default:
            break
        }
        return Self.notFound(headers: [])
    }

    /// `init.js` as Firebase Hosting writes it — it refuses to run before the SDK, then
    /// initializes the default app with the project's configuration — and, as the Firebase
    /// CLI's emulators write it, pointing the SDKs loaded before it at `origin`: Hearth answers
    /// accounts, functions and files there, where the SDKs would otherwise call Google's hosts.
    ///
    /// Auth takes any origin (`useEmulator(url)`, without the banner). Functions take it
    /// through SDK 8's `useFunctionsEmulator(origin)`, or `useEmulator(host, port)` on plain
    /// HTTP. Storage's `useEmulator` is plain HTTP only, so on HTTPS the storage service's host
    /// is set to this origin (SDK 8 keeps a scheme in it, the compat SDK a separate protocol).
    static func initScript(_ config: [String: String], origin: String) -> [UInt8] {
        let object = (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let originLiteral = (try? JSONSerialization.data(withJSONObject: [origin], options: [.withoutEscapingSlashes]))
            .map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "location.origin"
        return Array(
            """
            if (typeof firebase === 'undefined') throw new Error('hosting/init-error: Firebase SDK not detected. You must include it before /__/firebase/init.js');
            var firebaseConfig = \(object);
            if (firebaseConfig) {
              firebase.initializeApp(firebaseConfig);
              (function (origin) {
                // Hearth answers accounts, functions and files on this origin.
                var url = new URL(origin);
                var plain = url.protocol === 'http:';
                var port = Number(url.port || (plain ? 80 : 443));
                if (typeof firebase.auth === 'function') {
                  firebase.auth().useEmulator(origin, { disableWarnings: true });
                }
                if (typeof firebase.functions === 'function') {
                  var functions = firebase.functions();
                  if (typeof functions.useFunctionsEmulator === 'function') functions.useFunctionsEmulator(origin);
                  else if (plain && typeof functions.useEmulator === 'function') functions.useEmulator(url.hostname, port);
                }
                if (typeof firebase.storage === 'function') {
                  var storage = firebase.storage();
                  var service = storage._delegate;
                  if (plain && typeof storage.useEmulator === 'function') storage.useEmulator(url.hostname, port);
                  else if (service && typeof service.host === 'string') service.host = '_protocol' in service ? url.host : origin;
                }
              })(\(originLiteral));
            }

            """.utf8)
    }

    /// The SDK file for `version` in the SDK folder, when it has it.
    private static func sdkLocation(in folder: URL?, version: String, file: String) -> String? {
        guard let folder else { return nil }
        var candidates = [folder.appendingPathComponent(version).appendingPathComponent(file)]
        let name = folder.lastPathComponent
        if name == version || name.hasSuffix("-\(version)") { candidates.append(folder.appendingPathComponent(file)) }
        for candidate in candidates {
            let files = HostingFolderFiles(folder: candidate.deletingLastPathComponent())
            if let real = HostingFolderFiles.realPath(candidate.path), HostingPath.isInside(real, root: files.root) { return real }
        }
        return nil
    }

    static func isVersion(_ text: Substring) -> Bool {
        text.first?.isNumber == true && text.count <= 40 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    static func isFileName(_ text: Substring) -> Bool {
        !text.isEmpty && text.first != "." && text.count <= 100
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
    }
}
