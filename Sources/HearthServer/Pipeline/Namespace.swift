import HearthEngine
import Hummingbird

/// One part of the server's URL space: which requests it takes, what they are counted as, and
/// the responder that answers them.
///
/// Firebase's REST API owns the whole path space (any path ending in `.json` is data), so the
/// server's own endpoints are namespaces matched first, in order, and the database takes what
/// is left. Hummingbird's trie router cannot express that: it does not fall back from a constant
/// path to a `/**` sibling (with `/metrics` and `/**` registered, `/metrics/a.json`, data under a
/// key named `metrics`, would be a 404). Inside a namespace, routing is its responder's.
///
/// A class: the table is walked on every request, and a copy of a namespace would retain each
/// of its closures.
final class Namespace: Sendable {
    typealias Context = HearthRequestContext

    /// Counted as this, unless the responder says otherwise (``RequestNote``).
    let transport: HearthResponder.Transport
    /// The security headers its responses get, unless the responder says otherwise.
    let headers: SecurityHeaders.Kind
    /// False for same-origin endpoints, which get no CORS headers.
    let crossOrigin: Bool
    /// Whether a request belongs here.
    let matches: Match
    let responder: any HTTPResponder<Context>

    /// How a namespace tells its requests.
    enum Match: Sendable {
        /// By the request's path alone: the table reads the path once for all of these (each
        /// read of `request.uri.path` makes a new string).
        case path(@Sendable (String) -> Bool)
        /// By anything else about the request.
        case request(@Sendable (Request, Context) -> Bool)
    }

    init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        matches: Match, responder: any HTTPResponder<Context>
    ) {
        self.transport = transport
        self.headers = headers
        self.crossOrigin = crossOrigin
        self.matches = matches
        self.responder = responder
    }

    convenience init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        matches: @escaping @Sendable (Request, Context) -> Bool, responder: any HTTPResponder<Context>
    ) {
        self.init(transport: transport, headers: headers, crossOrigin: crossOrigin, matches: .request(matches), responder: responder)
    }

    /// A namespace of the paths `path` accepts, answered by `responder`.
    convenience init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        path: @escaping @Sendable (String) -> Bool, responder: any HTTPResponder<Context>
    ) {
        self.init(transport: transport, headers: headers, crossOrigin: crossOrigin, matches: .path(path), responder: responder)
    }

    /// A namespace answered by `respond`.
    convenience init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        matches: @escaping @Sendable (Request, Context) -> Bool,
        respond: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        self.init(
            transport: transport, headers: headers, crossOrigin: crossOrigin, matches: .request(matches),
            responder: CallbackResponder(callback: respond))
    }

    /// A namespace of the paths `path` accepts, answered by `respond`.
    convenience init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        path: @escaping @Sendable (String) -> Bool,
        respond: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        self.init(
            transport: transport, headers: headers, crossOrigin: crossOrigin, matches: .path(path),
            responder: CallbackResponder(callback: respond))
    }

    func accepts(_ request: Request, path: String, context: Context) -> Bool {
        switch matches {
        case .path(let matches): return matches(path)
        case .request(let matches): return matches(request, context)
        }
    }
}

extension Namespace {
    /// This namespace, with what its responder throws written in `format`.
    func guarded(by format: some APIErrorFormat) -> Namespace {
        Namespace(
            transport: transport, headers: headers, crossOrigin: crossOrigin, matches: matches,
            responder: format.guarding(responder))
    }
}

/// The first-match table of ``Namespace``s, with the responder that takes what none matched.
struct NamespaceTable: HTTPResponder {
    typealias Context = HearthRequestContext

    let namespaces: [Namespace]
    let fallback: Namespace

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        let namespace = namespaces.first { $0.accepts(request, path: path, context: context) } ?? fallback
        context.note.update {
            $0.transport = namespace.transport
            $0.headers = namespace.headers
            $0.crossOrigin = namespace.crossOrigin
        }
        return try await namespace.responder.respond(to: request, context: context)
    }
}
