import Hummingbird

/// The server's own endpoints for admins and the console, as one Hummingbird router: figures
/// (`/metrics`, `/.hearth/stats`), logs (`/.hearth/logs`, `/.hearth/requests`), backups
/// (`/.hearth/backups…`), data browsing and key search (`/.hearth/data/…`), the figures' recent
/// history (`/.hearth/metrics/history`), functions (`/.hearth/functions…`)
/// and the hosted app's releases (`/.hearth/hosting…`). Each endpoint admits its
/// caller and its methods itself (``AdminCredential/admit(_:methods:)``), so every method is
/// routed to it; refusals are written in the Realtime Database's format.
struct AdminRoutes: Sendable {
    typealias Context = HearthRequestContext

    let metrics: MetricsResponder
    let history: MetricsHistoryResponder
    let stats: StatsResponder
    let logs: RecentLogsResponder
    let requests: RequestLogResponder
    let backups: BackupsResponder
    let dataBrowse: DataBrowseResponder
    let functions: FunctionsAdminResponder
    let hosting: HostingAdminResponder

    static let paths: Set<String> = Set(FunctionsAdminResponder.paths).union(HostingAdminResponder.paths).union([
        MetricsResponder.path, MetricsHistoryResponder.path, StatsResponder.path, RecentLogsResponder.path, RequestLogResponder.path,
        BackupsResponder.path, BackupsResponder.previewPath, BackupsResponder.restorePath,
    ]).union(DataBrowseResponder.paths)

    /// True for the paths these routes answer.
    static func handles(_ path: String) -> Bool { paths.contains(path) }

    func responder() -> any HTTPResponder<Context> {
        let router = Router(context: Context.self)
        router.add(middleware: APIErrorMiddleware(RealtimeDatabaseErrors()))
        func route(_ path: String, _ handler: @escaping RouteHandler) {
            router.endpoint(RouterPath(path), Dictionary(uniqueKeysWithValues: Router<Context>.refusedMethods.map { ($0, handler) }))
        }
        route(MetricsResponder.path) { request, context in try await metrics.respond(to: request, context: context) }
        route(MetricsHistoryResponder.path) { request, _ in try await history.respond(to: request) }
        route(StatsResponder.path) { request, _ in try await stats.respond(to: request) }
        route(RecentLogsResponder.path) { request, _ in try await logs.respond(to: request) }
        route(RequestLogResponder.path) { request, _ in try await requests.respond(to: request) }
        for path in [BackupsResponder.path, BackupsResponder.previewPath, BackupsResponder.restorePath] {
            route(path) { request, _ in try await backups.respond(to: request) }
        }
        for path in DataBrowseResponder.paths {
            route(path) { request, _ in try await dataBrowse.respond(to: request) }
        }
        for path in FunctionsAdminResponder.paths {
            route(path) { request, _ in try await functions.respond(to: request) }
        }
        for path in HostingAdminResponder.paths {
            route(path) { request, _ in try await hosting.respond(to: request) }
        }
        return router.buildResponder()
    }
}
