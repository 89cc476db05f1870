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
struct Namespace: Sendable {
    typealias Context = HearthRequestContext

    /// Counted as this, unless the responder says otherwise (``RequestNote``).
    var transport: HearthResponder.Transport
    /// The security headers its responses get, unless the responder says otherwise.
    var headers: SecurityHeaders.Kind = .api
    /// False for same-origin endpoints, which get no CORS headers.
    var crossOrigin = true
    /// Whether a request belongs here.
    var matches: @Sendable (Request, Context) -> Bool
    var responder: any HTTPResponder<Context>

    init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        matches: @escaping @Sendable (Request, Context) -> Bool, responder: any HTTPResponder<Context>
    ) {
        self.transport = transport
        self.headers = headers
        self.crossOrigin = crossOrigin
        self.matches = matches
        self.responder = responder
    }

    /// A namespace answered by `respond`.
    init(
        transport: HearthResponder.Transport, headers: SecurityHeaders.Kind = .api, crossOrigin: Bool = true,
        matches: @escaping @Sendable (Request, Context) -> Bool,
        respond: @escaping @Sendable (Request, Context) async throws -> Response
    ) {
        self.init(
            transport: transport, headers: headers, crossOrigin: crossOrigin, matches: matches,
            responder: CallbackResponder(callback: respond))
    }
}

/// The first-match table of ``Namespace``s, with the responder that takes what none matched.
struct NamespaceTable: HTTPResponder {
    typealias Context = HearthRequestContext

    let namespaces: [Namespace]
    let fallback: Namespace

    func respond(to request: Request, context: Context) async throws -> Response {
        let namespace = namespaces.first { $0.matches(request, context) } ?? fallback
        context.note.update {
            $0.transport = namespace.transport
            $0.headers = namespace.headers
            $0.crossOrigin = namespace.crossOrigin
        }
        return try await namespace.responder.respond(to: request, context: context)
    }
}
