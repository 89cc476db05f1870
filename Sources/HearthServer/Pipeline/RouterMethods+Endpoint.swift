import Hummingbird

extension RouterMethods {
    /// What answers one method at one path.
    typealias EndpointHandler = @Sendable (Request, Context) async throws -> Response

    /// `handlers` at `path`, one per method; the path's other methods throw
    /// `HTTPError(.methodNotAllowed)`, which each API's ``APIErrorFormat`` writes its own way
    /// (Hummingbird's trie would answer them 404, as if the path did not exist).
    @discardableResult
    func endpoint(_ path: RouterPath, _ handlers: [HTTPRequest.Method: EndpointHandler]) -> Self {
        for (method, handler) in handlers { on(path, method: method, use: handler) }
        for method in Self.refusedMethods where handlers[method] == nil {
            on(path, method: method) { _, _ -> Response in throw HTTPError(.methodNotAllowed) }
        }
        return self
    }

    /// `handler` for `method` at `path`, and 405 for the path's other methods.
    @discardableResult
    func endpoint(_ path: RouterPath, _ method: HTTPRequest.Method, _ handler: @escaping EndpointHandler) -> Self {
        endpoint(path, [method: handler])
    }

    /// The methods answered 405 where a path does not take them (`OPTIONS` is the CORS
    /// preflight's, answered before any API's routes).
    static var refusedMethods: [HTTPRequest.Method] { [.get, .head, .post, .put, .patch, .delete] }
}

/// What answers one method at one path of the server's routers.
typealias RouteHandler = @Sendable (Request, HearthRequestContext) async throws -> Response
