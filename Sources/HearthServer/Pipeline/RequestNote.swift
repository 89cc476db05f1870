import Synchronization

/// What the handling of one request records for the middleware around it: which part of the
/// server answered (the metrics' and logs' transport label) and which headers its response
/// gets. The namespace that takes the request sets its defaults; a responder refines them
/// (a database read that turns out to be a stream, a file download, a page).
///
/// Hummingbird passes the context down the chain by value, so what an inner responder learns
/// reaches the outer middleware through this one shared object per request.
///
/// Threading: one request's handling runs in sequence, but may cross tasks; a lock keeps it
/// `Sendable` at no measurable cost.
final class RequestNote: Sendable {
    struct Facts: Sendable {
        var transport: HearthResponder.Transport = .rest
        var headers: SecurityHeaders.Kind = .api
        /// False for same-origin endpoints (the web session cookie), which get no CORS headers.
        var crossOrigin = true
    }

    private let facts = Mutex(Facts())

    var current: Facts { facts.withLock { $0 } }

    func update(_ change: (inout Facts) -> Void) {
        facts.withLock { change(&$0) }
    }
}
