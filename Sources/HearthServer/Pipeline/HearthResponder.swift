import Foundation
import HearthEngine
import HearthFiles
import Hummingbird
import Logging

/// The one entry point: every request passes the middleware (``RequestIDMiddleware`` to name
/// it, ``RequestObservationMiddleware`` for metrics and logs, ``ResponseHeadersMiddleware`` for
/// CORS and the security headers) and
/// then the first-match table of namespaces (``NamespaceTable``): CORS preflights, account
/// requests, callable and HTTPS functions, the web session, file requests (Firebase Storage's API, and Cloud Storage's JSON
/// API for server code), the server's figures for admins, long-polling,
/// page requests, and the database, which takes everything else.
///
/// On the files origin (the files port, or a request for the files host name) only file
/// storage is answered: no page, account or database request is served where user content is.
struct HearthResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    /// True for the listener on the files port.
    var filesOnly = false
    private let appPipeline: any HTTPResponder<Context>
    private let filesPipeline: any HTTPResponder<Context>

    init(
        database databaseResponder: DatabaseResponder,
        longPolling: RealtimeLongPolling,
        auth: AuthResponder,
        session: WebSessionResponder,
        files: FilesResponder,
        cloudStorage: CloudStorageResponder,
        stats: StatsResponder,
        web: WebResponder,
        hosting: HostingResponder? = nil,
        filesOrigin: FilesOrigin,
        proxies: ProxyTrust,
        metrics: ServerMetrics,
        metricsResponder: MetricsResponder,
        metricsHistory: MetricsHistoryResponder,
        logs: RecentLogsResponder,
        requests: RequestLogResponder,
        backups: BackupsResponder,
        dataBrowse: DataBrowseResponder,
        functionsAdmin: FunctionsAdminResponder,
        hostingAdmin: HostingAdminResponder,
        functions: FunctionsResponder? = nil,
        accessLog: Bool = false
    ) {
        // Each API writes its errors in its own format (``APIErrorFormat``): the routers carry
        // theirs; the other namespaces' responders are guarded here.
        let filesOnAppOrigin = files.responder(onAppOrigin: true)
        let cloudStorageOnAppOrigin = cloudStorage.responder(onAppOrigin: true)
        let adminRoutes = AdminRoutes(
            metrics: metricsResponder, history: metricsHistory, stats: stats, logs: logs, requests: requests, backups: backups, dataBrowse: dataBrowse,
            functions: functionsAdmin, hosting: hostingAdmin
        ).responder()
        let database = RealtimeDatabaseErrors()
        let filesOnlyTable = NamespaceTable(
            namespaces: [
                Namespace(transport: .files, matches: { request, _ in request.method == .options }) { request, _ in
                    CORS.preflight(request)
                },
                Namespace(
                    transport: .files, headers: .file, path: { FilesResponder.handles($0) },
                    responder: files.responder(onAppOrigin: false)),
                Namespace(
                    transport: .files, headers: .file, path: { CloudStorageResponder.handles($0) },
                    responder: cloudStorage.responder(onAppOrigin: false)),
            ],
            fallback: Namespace(transport: .files, matches: { _, _ in true }) { _, _ in StorageErrors.response(for: .notFound) })
        let redirect = FilesRedirect(filesOrigin: filesOrigin, proxies: proxies)
        let webPages = Namespace(transport: .web, matches: { request, _ in WebResponder.handles(request) }) { request, context in
            let origin = redirect.filesOrigin(for: request, context: context)
            context.note.update { $0.headers = .page(filesOrigin: origin) }
            return try await web.respond(to: request, context: context, filesOrigin: origin)
        }.guarded(by: database)
        var pages = [webPages]
        if let hosting {
            // The owner's app, when one is deployed, takes the site; the console keeps its path
            // and its policy, and the demo app answers while nothing is deployed.
            let console = Namespace(
                transport: .web, matches: { request, _ in WebResponder.handles(request) && Self.isConsole(request.uri.path) },
                responder: webPages.responder)
            let hosted = Namespace(
                transport: .web, headers: .hosted, crossOrigin: false,
                matches: { request, _ in HostingResponder.handles(request) && hosting.deployment() != nil }
            ) { request, context in
                try await hosting.respond(
                    to: request, context: context, web: web, functions: functions,
                    filesOrigin: redirect.filesOrigin(for: request, context: context)
                ) { request, context in
                    try await databaseResponder.respond(to: request, context: context)
                }
            }.guarded(by: database)
            pages = [console, hosted, webPages]
        }
        let appTable = NamespaceTable(
            namespaces: [
                Namespace(
                    transport: .files, matches: { request, _ in filesOrigin.isFilesHost(request.head.authority) },
                    responder: filesOnlyTable),
                // Same-origin only: no CORS headers.
                Namespace(
                    transport: .session, crossOrigin: false, path: { WebSessionResponder.handles($0) },
                    responder: session.responder()),
                // A preflight of a path the hosted site rewrites to a function is the function's.
                Namespace(transport: .preflight, matches: { request, _ in request.method == .options && hosting?.takesPreflight(request) != true }) {
                    request, _ in CORS.preflight(request)
                },
                Namespace(transport: .admin, path: { AdminRoutes.handles($0) }, responder: adminRoutes),
                Namespace(transport: .auth, path: { AuthResponder.handles($0) }, responder: auth.responder()),
                // Callable and HTTPS functions at the emulator's paths; nothing when none runs.
                Namespace(transport: .functions, path: { functions?.target(of: $0) != nil }) { request, context in
                    try await functions!.respond(to: request, context: context)
                },
                Namespace(transport: .files, headers: .file, path: { FilesResponder.handles($0) }) {
                    request, context in
                    if let response = redirect.response(to: request, context: context) {
                        context.note.update { $0.headers = .api }
                        return response
                    }
                    return try await filesOnAppOrigin.respond(to: request, context: context)
                },
                // Cloud Storage's JSON API, for servers with admin credentials; a browser's own
                // download goes to the files origin as above.
                Namespace(transport: .files, headers: .file, path: { CloudStorageResponder.handles($0) }) {
                    request, context in
                    if let response = redirect.response(to: request, context: context) {
                        context.note.update { $0.headers = .api }
                        return response
                    }
                    return try await cloudStorageOnAppOrigin.respond(to: request, context: context)
                },
                Namespace(transport: .longPolling, path: { $0 == RealtimeLongPolling.path }) {
                    request, context in
                    if RealtimeLongPolling.isDisconnectFrame(request) { context.note.update { $0.headers = .longPollFrame } }
                    return await longPolling.respond(to: request, connection: context.channel)
                }.guarded(by: database),
            ] + pages,

            fallback: Namespace(transport: .rest, matches: { _, _ in true }) { request, context in
                if request.headers.value(of: .accept)?.contains("text/event-stream") == true { context.note.update { $0.transport = .sse } }
                return try await databaseResponder.respond(to: request, context: context)
            }.guarded(by: database))
        let requestLog = requests.log
        func pipeline(_ table: NamespaceTable) -> any HTTPResponder<Context> {
            // Hummingbird's middleware chain, around the table rather than a trie router.
            let middleware = Router(context: Context.self).middlewares
            middleware.add(RequestIDMiddleware(proxies: proxies))
            middleware.add(RequestObservationMiddleware(metrics: metrics, requestLog: requestLog, proxies: proxies, accessLog: accessLog))
            middleware.add(ResponseHeadersMiddleware())
            middleware.add(GoogleAPIHostMiddleware())
            return middleware.constructResponder(finalResponder: table)
        }
        appPipeline = pipeline(appTable)
        filesPipeline = pipeline(filesOnlyTable)
    }

    /// The console's paths, which stay Hearth's when an owner's app is hosted.
    static func isConsole(_ path: String) -> Bool {
        path == "/console" || path.hasPrefix("/console/")
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        try await (filesOnly ? filesPipeline : appPipeline).respond(to: request, context: context)
    }
}
