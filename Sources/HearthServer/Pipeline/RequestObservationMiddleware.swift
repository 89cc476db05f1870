import Foundation
import HearthEngine
import Hummingbird
import Logging

/// Counts every request in the metrics (by transport, operation and status), keeps it in the
/// request log (secrets hidden; the console's own polling left out), writes the access log
/// line when asked, and counts file bytes in and out.
///
/// The request log's ``RequestLog/Note`` is set for the request's handling, so whoever reads
/// its credential can note who it spoke for.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext

    let metrics: ServerMetrics
    let requestLog: RequestLog
    let proxies: ProxyTrust
    /// Log every request at `info` (method, path without secrets, status, time).
    var accessLog = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let logNote = RequestLog.Note()
        let response = try await RequestLog.$current.withValue(logNote) { try await next(request, context) }
        let duration = ContinuousClock.now - started
        let transport = context.note.current.transport
        let operation = HearthResponder.operation(of: request, transport: transport)
        metrics.request(transport: transport.rawValue, operation: operation, status: Int(response.status.code), duration: duration)
        let path = request.uri.path
        let kept = requestLog.isEnabled && !HearthResponder.isMonitoringPath(path)
        let loggedPath = kept || accessLog ? HearthResponder.loggablePath(request.uri, path: path) : nil
        if kept, let loggedPath {
            requestLog.record(
                path: loggedPath, time: Date(), method: request.method.rawValue, status: Int(response.status.code),
                duration: duration, transport: transport.rawValue, requestID: context.id, uid: logNote.uid)
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
}
