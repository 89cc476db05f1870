import Foundation
import HearthEngine
import HearthFiles
import Hummingbird
import Logging

/// The one entry point: answers CORS preflights, sends account requests to the account
/// service, the web session to its endpoint, file requests to file storage, the server's
/// figures to admins, page requests to the web front end and everything else to the database,
/// and puts the CORS and security headers (``SecurityHeaders``) of its kind on every response.
///
/// On the files origin (the files port, or a request for the files host name) only file
/// storage is answered: no page, account or database request is served where user content is.
///
/// Why not Hummingbird's `Router`: Firebase's REST API owns the whole path space (any path
/// ending in `.json` is data), so the server's own endpoints are matched exactly and
/// everything else falls through to the database. The trie router does not fall back from a
/// constant prefix to a catch-all sibling: with `/metrics` and `/**` registered,
/// `/metrics/a.json` (data under a key named `metrics`) would get a 404 instead of the data.
/// The order below is that contract; each responder parses, calls the operations layer and
/// encodes on its own.
struct HearthResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let database: DatabaseResponder
    let longPolling: RealtimeLongPolling
    let auth: AuthResponder
    let session: WebSessionResponder
    let files: FilesResponder
    let stats: StatsResponder
    let web: WebResponder
    let filesOrigin: FilesOrigin
    let proxies: ProxyTrust
    let metrics: ServerMetrics
    let metricsResponder: MetricsResponder
    let logs: RecentLogsResponder
    let requests: RequestLogResponder
    let backups: BackupsResponder
    let dataBrowse: DataBrowseResponder
    /// Log every request at `info` (method, path without secrets, status, time).
    var accessLog = false
    /// True for the listener on the files port.
    var filesOnly = false

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let note = RequestLog.Note()
        let (response, transport) = try await RequestLog.$current.withValue(note) { try await route(request, context: context) }
        let duration = ContinuousClock.now - started
        let operation = Self.operation(of: request, transport: transport)
        metrics.request(transport: transport.rawValue, operation: operation, status: Int(response.status.code), duration: duration)
        let kept = requests.log.isEnabled && !Self.monitoringPaths.contains(request.uri.path)
        let loggedPath = kept || accessLog ? Self.loggablePath(request.uri) : nil
        if kept, let loggedPath {
            requests.log.record(
                path: loggedPath, time: Date(), method: request.method.rawValue, status: Int(response.status.code),
                duration: duration, transport: transport.rawValue, requestID: context.id, uid: note.uid)
        }
        if accessLog, let loggedPath {
            context.logger.info("request", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(loggedPath)",
                "status": "\(response.status.code)", "ms": "\(Double(duration.nanoseconds) / 1e6)",
                "transport": "\(transport.rawValue)",
                "client": "\(proxies.clientAddress(of: request, peer: context.remoteAddress))",
            ])
        }
        if transport == .files, response.status.code < 400 {
            if request.method == .get, let length = response.headers[.contentLength].flatMap({ Int($0) }) {
                metrics.fileBytes(direction: "out", count: length)
            } else if request.method != .get, let length = request.headers[.contentLength].flatMap({ Int($0) }) {
                metrics.fileBytes(direction: "in", count: length)
            }
        }
        return response
    }

    private func route(_ request: Request, context: Context) async throws -> (Response, Transport) {
        let path = request.uri.path
        var response: Response
        var transport = Transport.rest
        var kind = SecurityHeaders.Kind.api
        if filesOnly || filesOrigin.isFilesHost(request.head.authority) {
            transport = .files
            if request.method == .options {
                response = CORS.preflight(request)
            } else if FilesResponder.handles(path) {
                response = await files.respond(to: request, context: context, onAppOrigin: false)
                kind = .file
            } else {
                response = FilesResponder.errorResponse(.notFound)
            }
        } else if WebSessionResponder.handles(path) {
            // Same-origin only: no CORS headers.
            response = await session.respond(to: request, context: context)
            SecurityHeaders.apply(.api, to: &response.headers)
            return (response, .session)
        } else if request.method == .options {
            response = CORS.preflight(request)
            transport = .preflight
        } else if path == MetricsResponder.path {
            response = await metricsResponder.respond(to: request, context: context)
            transport = .admin
        } else if AuthResponder.handles(path) {
            transport = .auth
            response = await auth.respond(to: request, context: context)
        } else if FilesResponder.handles(path) {
            transport = .files
            if let redirect = filesRedirect(request, context: context) {
                response = redirect
            } else {
                response = await files.respond(to: request, context: context, onAppOrigin: true)
                kind = .file
            }
        } else if path == RealtimeLongPolling.path {
            transport = .longPolling
            response = await longPolling.respond(to: request, connection: context.channel)
            if RealtimeLongPolling.isDisconnectFrame(request) { kind = .longPollFrame }
        } else if path == StatsResponder.path {
            transport = .admin
            response = await stats.respond(to: request)
        } else if path == RecentLogsResponder.path {
            transport = .admin
            response = logs.respond(to: request)
        } else if path == RequestLogResponder.path {
            transport = .admin
            response = requests.respond(to: request)
        } else if BackupsResponder.handles(path) {
            transport = .admin
            response = await backups.respond(to: request)
        } else if DataBrowseResponder.handles(path) {
            transport = .admin
            response = await dataBrowse.respond(to: request)
        } else if WebResponder.handles(request) {
            transport = .web
            let origin = filesOrigin(for: request, context: context)
            response = await web.respond(to: request, context: context, filesOrigin: origin)
            kind = .page(filesOrigin: origin)
        } else {
            if request.headers[.accept]?.contains("text/event-stream") == true { transport = .sse }
            response = await database.respond(to: request, context: context)
        }
        CORS.decorate(&response)
        SecurityHeaders.apply(kind, to: &response.headers)
        return (response, transport)
    }

    /// The files origin as this request's browser reaches it, when files have one.
    private func filesOrigin(for request: Request, context: Context) -> String? {
        filesOrigin.origin(forAuthority: request.head.authority, scheme: proxies.scheme(of: request, peer: context.remoteAddress))
    }

    /// With a files origin, a download asked for on the app's origin by a browser itself (no
    /// `Authorization`: a link, an image, a navigation) goes to the files origin instead, so a
    /// file never opens as a document of the app's origin. Requests of the SDKs, which sign
    /// theirs, are answered here as before (a redirect would drop their `Authorization`).
    private func filesRedirect(_ request: Request, context: Context) -> Response? {
        guard request.method == .get || request.method == .head, request.headers[.authorization] == nil,
            FilesResponder.parameters(of: request)["alt"] == "media", let origin = filesOrigin(for: request, context: context)
        else { return nil }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        var headers = HTTPFields()
        headers[.location] = "\(origin)\(request.uri.path)\(query)"
        return Response(status: .temporaryRedirect, headers: headers)
    }
}
