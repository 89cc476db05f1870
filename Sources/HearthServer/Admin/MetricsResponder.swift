import Foundation
import HearthCore
import HearthEngine
import HearthFunctions
import Hummingbird

/// `GET /metrics`: the server's figures in Prometheus's text format, for admins (the admin
/// token, or the emulator's `owner`), or for anyone on the separate `--metrics-port`, which an
/// operator keeps on a private network.
struct MetricsResponder: Sendable {
    static let path = "/metrics"
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let metrics: ServerMetrics
    let stats: StatsResponder
    let admin: AdminCredential
    /// The functions, whose waiting events are read at each scrape.
    var functions: FunctionsService? = nil
    /// True on the metrics port: no credential is asked for.
    var open = false

    /// Refusals are thrown, and written by ``RealtimeDatabaseErrors``.
    func respond(to request: Request, context: HearthRequestContext) async throws -> Response {
        if !open {
            _ = try await admin.admit(request, methods: [.get, .head])
        } else if request.method != .get && request.method != .head {
            throw HearthError(.invalidData, "Invalid method for \(Self.path): \(request.method.rawValue); use GET or HEAD.")
        }
        await recordGauges()
        var headers = HTTPFields()
        headers[.contentType] = Self.contentType
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }

    /// The figures read at each scrape rather than counted as they happen.
    func recordGauges() async {
        let figures = await stats.figures()
        metrics.gauge("hearth_uptime_seconds", [:], figures.uptimeSeconds)
        if let memory = figures.memoryBytes { metrics.gauge("hearth_resident_memory_bytes", [:], Double(memory)) }
        metrics.gauge("hearth_connections", ["kind": "listens"], Double(figures.connections.streams))
        metrics.gauge("hearth_connections", ["kind": "realtime"], Double(figures.connections.realtime))
        for database in figures.databases where database.open {
            metrics.gauge("hearth_database_sequence", ["database": database.name], Double(database.writes ?? 0))
            metrics.gauge("hearth_database_listeners", ["database": database.name], Double(database.streams))
        }
        if let functions {
            for (queue, waiting) in functions.backlog.waiting {
                metrics.gauge("hearth_function_backlog", ["function": queue.function, "source": queue.source], Double(waiting))
            }
            for (queue, dropped) in functions.backlog.dropped {
                metrics.gauge("hearth_function_events_dropped", ["function": queue.function, "source": queue.source], Double(dropped))
            }
        }
    }
}

/// The `--metrics-port` listener: `/metrics` and nothing else, with the Realtime Database's
/// error format as the admin endpoints have.
struct MetricsPortResponder: HTTPResponder {
    typealias Context = HearthRequestContext

    let metrics: MetricsResponder
    private let errors = RealtimeDatabaseErrors()

    func respond(to request: Request, context: Context) async throws -> Response {
        do {
            guard request.uri.path == MetricsResponder.path else {
                throw HearthError(.notFound, "Only \(MetricsResponder.path) is served on this port.")
            }
            return try await metrics.respond(to: request, context: context)
        } catch {
            return errors.response(for: error, to: request, context: context)
        }
    }
}
