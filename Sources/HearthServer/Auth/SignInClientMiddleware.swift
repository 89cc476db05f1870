import HTTPTypes
import HearthAuth
import Hummingbird

/// Tells the account service who is asking (``HearthAuth/SignInClient/current``) for the
/// length of each request: blocking functions are given the client's address (as the proxy
/// rules see it), user agent and locale (`X-Firebase-Locale`).
struct SignInClientMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext

    let proxies: ProxyTrust

    /// The longest user agent or locale passed on.
    static let maxLength = 512

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let client = SignInClient(
            ipAddress: proxies.clientAddress(of: request, peer: context.remoteAddress),
            userAgent: String((request.headers[.userAgent] ?? "").prefix(Self.maxLength)),
            locale: String((request.headers[Self.locale] ?? "en").prefix(Self.maxLength)))
        return try await SignInClient.$current.withValue(client) { try await next(request, context) }
    }

    static let locale = HTTPField.Name("X-Firebase-Locale")!
}
