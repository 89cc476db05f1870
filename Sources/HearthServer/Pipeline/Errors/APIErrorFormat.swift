import Hummingbird

/// How one API writes a failure on the wire: the Realtime Database's `{"error": "…"}`,
/// Identity Toolkit's `{"error": {"code", "message", "errors"}}`, Cloud Storage's
/// `{"error": {"code", "message"}}`.
///
/// Responders throw typed domain errors (``HearthCore/HearthError``, ``HearthAuth/AuthError``,
/// ``HearthFiles/FilesError``), which know nothing of HTTP; the namespace's
/// ``APIErrorMiddleware`` turns whatever reaches it into its API's answer through one format,
/// so each API has one path from an error to the wire. A failure no format knows is logged
/// and answered as the API's internal error, never echoed.
protocol APIErrorFormat: Sendable {
    /// The answer for `error`, thrown while handling `request`.
    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response
}

/// Renders what a namespace's handlers throw in its API's format (see ``APIErrorFormat``).
struct APIErrorMiddleware<Format: APIErrorFormat>: RouterMiddleware {
    typealias Context = HearthRequestContext

    let format: Format

    init(_ format: Format) {
        self.format = format
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return format.response(for: error, to: request, context: context)
        }
    }
}

extension APIErrorFormat {
    /// `responder`, with what it throws rendered in this format.
    func guarding(_ responder: some HTTPResponder<HearthRequestContext>) -> any HTTPResponder<HearthRequestContext> {
        // A router's group: MiddlewareGroup has no public initializer.
        let middleware = Router(context: HearthRequestContext.self).middlewares
        middleware.add(APIErrorMiddleware(self))
        return middleware.constructResponder(finalResponder: responder)
    }
}
