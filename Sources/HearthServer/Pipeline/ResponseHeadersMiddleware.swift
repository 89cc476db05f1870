import HearthEngine
import Hummingbird

/// Puts the headers of its kind on every response: CORS (any origin may use the API, as it may
/// Firebase's; same-origin endpoints excepted) and the security headers (``SecurityHeaders``).
struct ResponseHeadersMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        let facts = context.note.current
        if facts.crossOrigin { CORS.decorate(&response) }
        SecurityHeaders.apply(facts.headers, to: &response.headers)
        return response
    }
}
