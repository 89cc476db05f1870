import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird
import Logging

/// Keeps a web page's refresh token where the page's scripts cannot read it: in an `HttpOnly`,
/// `SameSite=Strict` cookie scoped to `/.hearth/session`. The page holds only a short-lived ID
/// token in memory, so a script injected into the page could act as the user while the page
/// is open, but could not carry away a credential that outlives it.
///
/// - `POST /.hearth/session` with `{"refreshToken": "…"}` (just received from a sign-in): checks
///   the token, keeps it in the cookie, and answers a fresh ID token.
/// - `POST /.hearth/session/token`: a fresh ID token for the session in the cookie.
/// - `DELETE /.hearth/session`: ends that session on the server and clears the cookie.
///
/// Answers are `{"idToken", "expiresIn", "localId"}`, and errors have Firebase Auth's shape
/// (`MISSING_REFRESH_TOKEN` when there is no session, `INVALID_REFRESH_TOKEN` when it ended,
/// `USER_DISABLED`). A request whose `Origin` is not this server's own is refused
/// (`403 CROSS_ORIGIN_REQUEST`), and answers carry no CORS headers: only the server's own
/// pages use these endpoints.
struct WebSessionResponder: Sendable {
    let service: AuthService
    /// Whose word is taken that the browser used TLS (the cookie is then `Secure`).
    let proxies: ProxyTrust

    static let path = "/.hearth/session"
    static let tokenPath = "/.hearth/session/token"
    /// How long the cookie lasts without use; every refresh renews it.
    static let cookieLifetimeSeconds = 30 * 24 * 3600
    static let maxBodyBytes = 16 * 1024

    static func handles(_ path: String) -> Bool { path == Self.path || path == tokenPath }

    /// The session's routes; refusals are written by ``WebSessionErrors``.
    func responder() -> any HTTPResponder<HearthRequestContext> {
        let router = Router(context: HearthRequestContext.self)
        router.add(middleware: APIErrorMiddleware(WebSessionErrors(proxies: proxies)))
        router.endpoint(RouterPath(Self.path), [
            .post: sameOrigin { request, context in
                let body: ByteBuffer
                do {
                    body = try await request.body.collect(upTo: Self.maxBodyBytes)
                } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                    throw AuthError.invalidArgument("The body is too large.")
                }
                guard let fields = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
                    throw AuthError.invalidArgument("The body must be a JSON object with a refreshToken.")
                }
                guard let refreshToken = fields["refreshToken"] as? String, !refreshToken.isEmpty else {
                    throw AuthError.missingRefreshToken
                }
                let secure = Self.isSecure(request, context, proxies: proxies)
                return try await answer(refreshToken: refreshToken, request: request, secure: secure)
            },
            .delete: sameOrigin { request, context in
                let refreshToken = try Self.cookieToken(of: request)
                do {
                    try await service.endSession(refreshToken: refreshToken)
                } catch let error as AuthError where error == .invalidRefreshToken {
                    // Already over: signing out still succeeds.
                }
                return Self.signedOut(request, secure: Self.isSecure(request, context, proxies: proxies))
            },
        ])
        router.endpoint(RouterPath(Self.tokenPath), .post, sameOrigin { request, context in
            let secure = Self.isSecure(request, context, proxies: proxies)
            return try await answer(refreshToken: try Self.cookieToken(of: request), request: request, secure: secure)
        })
        return router.buildResponder()
    }

    /// `handler` for requests from this server's own pages; `CROSS_ORIGIN_REQUEST` for others.
    private func sameOrigin(
        _ handler: @escaping @Sendable (Request, HearthRequestContext) async throws -> Response
    ) -> @Sendable (Request, HearthRequestContext) async throws -> Response {
        { request, context in
            guard Self.isSameOrigin(request) else { throw AuthError("CROSS_ORIGIN_REQUEST") }
            return try await handler(request, context)
        }
    }

    /// True when the browser used TLS (the cookie is then `Secure`).
    static func isSecure(_ request: Request, _ context: HearthRequestContext, proxies: ProxyTrust) -> Bool {
        proxies.scheme(of: request, peer: context.remoteAddress) == "https"
    }

    /// A fresh ID token for `refreshToken`, with the cookie (re)set to hold it.
    private func answer(refreshToken: String, request: Request, secure: Bool) async throws -> Response {
        let session = try await service.refresh(refreshToken: refreshToken)
        var response = AuthResponder.answer(WebSessionAnswer(
            idToken: session.idToken, expiresIn: String(session.expiresIn), localId: session.user.uid))
        guard let cookie = try? Cookie.validated(
            name: Self.cookieName(for: request), value: refreshToken, maxAge: Self.cookieLifetimeSeconds, path: Self.path,
            secure: secure, httpOnly: true, sameSite: .strict)
        else { throw AuthError.invalidRefreshToken }
        response.setCookie(cookie)
        return response
    }

    private static func signedOut(_ request: Request, secure: Bool) -> Response {
        var response = AuthResponder.answer(EmptyAnswer())
        response.setCookie(expiredCookie(for: request, secure: secure))
        return response
    }

    private static func cookieToken(of request: Request) throws(AuthError) -> String {
        guard let value = request.cookies[cookieName(for: request)]?.value, !value.isEmpty else { throw .missingRefreshToken }
        return value
    }

    static func expiredCookie(for request: Request, secure: Bool) -> Cookie {
        Cookie(name: cookieName(for: request), value: "", maxAge: 0, path: path, secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// `hearth_session`, suffixed with the port the browser addressed: browsers share cookies
    /// between the ports of one host, and two servers on one machine must not share sessions.
    static func cookieName(for request: Request) -> String {
        guard let authority = request.head.authority, let colon = authority.lastIndex(of: ":"),
            !authority[colon...].contains("]")
        else { return "hearth_session" }
        let port = authority[authority.index(after: colon)...]
        guard !port.isEmpty, port.allSatisfy(\.isASCIIDigit) else { return "hearth_session" }
        return "hearth_session_\(port)"
    }

    /// True when a browser says the request comes from a page of this origin (Fetch Metadata,
    /// which holds even behind a proxy that rewrites `Host`); without that, when it has no
    /// `Origin` (not sent by a page) or its `Origin` is this server as the browser addressed it.
    static func isSameOrigin(_ request: Request) -> Bool {
        if let site = request.headers[.secFetchSite] { return site == "same-origin" }
        guard let origin = request.headers[.origin] else { return true }
        guard let authority = request.head.authority, let url = URL(string: origin), let host = url.host else { return false }
        let address = url.port.map { "\(host):\($0)" } ?? host
        let bracketed = host.contains(":") ? (url.port.map { "[\(host)]:\($0)" } ?? "[\(host)]") : address
        return authority.lowercased() == address.lowercased() || authority.lowercased() == bracketed.lowercased()
    }
}

extension Character {
    var isASCIIDigit: Bool { asciiValue.map { (48...57).contains($0) } ?? false }
}
