import HearthAuth
import Hummingbird
import Logging

/// The web session's errors: Identity Toolkit's format (``IdentityToolkitErrors``), and a
/// session the server no longer knows, or that was ended (revoked, the account gone or
/// disabled), is forgotten in the browser too: its answer clears the cookie.
struct WebSessionErrors: APIErrorFormat {
    let proxies: ProxyTrust

    static let endedSession: [AuthError] = [.invalidRefreshToken, .tokenExpired, .userNotFound, .userDisabled]

    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response {
        let error = IdentityToolkitErrors(failureMessage: "web session request failed").authError(error, context: context)
        var response = IdentityToolkitErrors.response(for: error)
        if Self.endedSession.contains(error) {
            let secure = WebSessionResponder.isSecure(request, context, proxies: proxies)
            response.setCookie(WebSessionResponder.expiredCookie(for: request, secure: secure))
        }
        return response
    }
}
