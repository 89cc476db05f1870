import Foundation
import HearthServer
import HearthTesting
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web session: the refresh token kept in an HttpOnly cookie that only the server reads.
@Suite("Web session")
struct WebSessionTests {
    /// A URLSession that neither keeps nor sends cookies: each test passes them itself.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration)
    }()

    static func call(
        _ server: TestServer, _ method: String, _ path: String, body: String? = nil, cookie: String? = nil,
        origin: String? = nil
    ) async throws -> HTTPResult {
        var headers = ["Content-Type": "application/json"]
        if let cookie { headers["Cookie"] = cookie }
        if let origin { headers["Origin"] = origin }
        return try await httpRequest(
            method, URL(string: "http://127.0.0.1:\(server.port)\(path)")!, body: body.map { Data($0.utf8) }, headers: headers,
            session: session)
    }

    static func signUp(_ server: TestServer) async throws -> (refreshToken: String, uid: String) {
        let answer = try await AuthEndpointTests.signUp(server, "alice@example.com")
        return (try #require(answer["refreshToken"] as? String), try #require(answer["localId"] as? String))
    }

    static func json(_ result: HTTPResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: result.body) as? [String: Any]) ?? [:]
    }

    static func errorMessage(_ result: HTTPResult) -> String? {
        (json(result)["error"] as? [String: Any])?["message"] as? String
    }

    @Test func aSessionIsKeptInAnHttpOnlyCookieAndGivesIDTokens() async throws {
        try await withServer { server in
            let (refreshToken, uid) = try await Self.signUp(server)
            let origin = "http://127.0.0.1:\(server.port)"
            let started = try await Self.call(server, "POST", "/.hearth/session", body: #"{"refreshToken":"\#(refreshToken)"}"#, origin: origin)
            #expect(started.status == 200, "\(started.text)")
            let body = Self.json(started)
            #expect(body["localId"] as? String == uid)
            #expect((body["idToken"] as? String)?.split(separator: ".").count == 3)
            #expect(body["refreshToken"] == nil, "the refresh token must not come back to the page")
            #expect(!started.text.contains(refreshToken))
            #expect(started.header("Access-Control-Allow-Origin") == nil)
            let cookie = try #require(started.header("Set-Cookie"))
            let name = "hearth_session_\(server.port)"
            #expect(cookie.hasPrefix("\(name)=\(refreshToken);"), "\(cookie)")
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/.hearth/session", "Max-Age="] {
                #expect(cookie.contains(attribute), "\(cookie)")
            }
            #expect(!cookie.contains("Secure"), "plain HTTP: \(cookie)")

            let token = try await Self.call(server, "POST", "/.hearth/session/token", cookie: "\(name)=\(refreshToken)", origin: origin)
            #expect(token.status == 200, "\(token.text)")
            let idToken = try #require(Self.json(token)["idToken"] as? String)
            // The ID token works for the database.
            let read = try await server.request("GET", "/a.json", headers: ["Authorization": "Bearer \(idToken)"])
            #expect(read.status == 200)

            // Behind a TLS proxy the cookie is Secure.
            let secure = try await httpRequest(
                "POST", URL(string: "\(origin)/.hearth/session/token")!,
                headers: ["Cookie": "\(name)=\(refreshToken)", "X-Forwarded-Proto": "https"], session: Self.session)
            #expect(secure.header("Set-Cookie")?.contains("Secure") == true)
        }
    }

    @Test func signingOutEndsTheSessionOnTheServer() async throws {
        try await withServer { server in
            let (refreshToken, _) = try await Self.signUp(server)
            let cookie = "hearth_session_\(server.port)=\(refreshToken)"
            let ended = try await Self.call(server, "DELETE", "/.hearth/session", cookie: cookie)
            #expect(ended.status == 200, "\(ended.text)")
            #expect(ended.header("Set-Cookie")?.contains("Max-Age=0") == true)
            // The refresh token is dead everywhere, not only in this browser.
            let refresh = try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token", body: "grant_type=refresh_token&refresh_token=\(refreshToken)",
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(refresh.status == 400)
            let again = try await Self.call(server, "POST", "/.hearth/session/token", cookie: cookie)
            #expect(again.status == 400)
            #expect(Self.errorMessage(again) == "INVALID_REFRESH_TOKEN")
            #expect(again.header("Set-Cookie")?.contains("Max-Age=0") == true, "a dead session's cookie is cleared")
            // Signing out twice is fine.
            #expect(try await Self.call(server, "DELETE", "/.hearth/session", cookie: cookie).status == 200)
        }
    }

    @Test func anotherOriginCannotUseTheSession() async throws {
        try await withServer { server in
            let (refreshToken, _) = try await Self.signUp(server)
            let cookie = "hearth_session_\(server.port)=\(refreshToken)"
            for origin in ["https://evil.example", "http://127.0.0.1:\(server.port + 1)", "null", "http://localhost:\(server.port)"] {
                for (method, path) in [("POST", "/.hearth/session/token"), ("DELETE", "/.hearth/session")] {
                    let result = try await Self.call(server, method, path, cookie: cookie, origin: origin)
                    #expect(result.status == 403, "\(origin) \(method) \(path)")
                    #expect(Self.errorMessage(result) == "CROSS_ORIGIN_REQUEST")
                    #expect(result.header("Set-Cookie") == nil)
                    #expect(result.header("Access-Control-Allow-Origin") == nil)
                }
            }
            // A browser's own word (Fetch Metadata) decides when it is there, even with a matching Origin.
            let sameSite = try await httpRequest(
                "POST", URL(string: "http://127.0.0.1:\(server.port)/.hearth/session/token")!,
                headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)", "Sec-Fetch-Site": "same-site"],
                session: Self.session)
            #expect(sameSite.status == 403)
            // Behind a proxy that rewrites Host, a same-origin page is still recognised.
            let rewritten = try await httpRequest(
                "POST", URL(string: "http://127.0.0.1:\(server.port)/.hearth/session/token")!,
                headers: ["Cookie": cookie, "Origin": "https://app.example.com", "Sec-Fetch-Site": "same-origin"],
                session: Self.session)
            #expect(rewritten.status == 200, "\(rewritten.text)")
            // Still signed in: nothing above ended the session.
            let token = try await Self.call(server, "POST", "/.hearth/session/token", cookie: cookie, origin: "http://127.0.0.1:\(server.port)")
            #expect(token.status == 200)
        }
    }

    @Test func badRequestsGetFirebasesErrorsAndSetNoCookie() async throws {
        try await withServer { server in
            let cases: [(String, String, String?, String?, Int, String)] = [
                ("POST", "/.hearth/session", "{", nil, 400, "INVALID_ARGUMENT : The body must be a JSON object with a refreshToken."),
                ("POST", "/.hearth/session", "[1]", nil, 400, "INVALID_ARGUMENT : The body must be a JSON object with a refreshToken."),
                ("POST", "/.hearth/session", "{}", nil, 400, "MISSING_REFRESH_TOKEN"),
                ("POST", "/.hearth/session", #"{"refreshToken": 5}"#, nil, 400, "MISSING_REFRESH_TOKEN"),
                ("POST", "/.hearth/session", #"{"refreshToken": "made-up"}"#, nil, 400, "INVALID_REFRESH_TOKEN"),
                ("POST", "/.hearth/session/token", nil, nil, 400, "MISSING_REFRESH_TOKEN"),
                ("POST", "/.hearth/session/token", nil, "hearth_session_\(server.port)=", 400, "MISSING_REFRESH_TOKEN"),
                ("POST", "/.hearth/session/token", nil, "hearth_session_\(server.port)=nope", 400, "INVALID_REFRESH_TOKEN"),
                ("DELETE", "/.hearth/session", nil, nil, 400, "MISSING_REFRESH_TOKEN"),
                ("GET", "/.hearth/session", nil, nil, 405, "METHOD_NOT_ALLOWED"),
                ("PUT", "/.hearth/session/token", "{}", nil, 405, "METHOD_NOT_ALLOWED"),
            ]
            for (method, path, body, cookie, status, message) in cases {
                let result = try await Self.call(server, method, path, body: body, cookie: cookie)
                #expect(result.status == status, "\(method) \(path) \(body ?? ""): \(result.text)")
                #expect(Self.errorMessage(result) == message, "\(method) \(path) \(body ?? "")")
                #expect(result.header("Set-Cookie")?.contains("Max-Age=0") ?? true, "\(method) \(path): no session cookie is set")
            }
            let huge = String(repeating: "x", count: 20_000)
            let tooBig = try await Self.call(server, "POST", "/.hearth/session", body: #"{"refreshToken":"\#(huge)"}"#)
            #expect(tooBig.status >= 400 && tooBig.status < 500)
            #expect(tooBig.header("Set-Cookie") == nil)
        }
    }

    @Test func aDisabledAccountLosesItsSession() async throws {
        try await withServer { server in
            let (refreshToken, uid) = try await Self.signUp(server)
            let disabled = try await server.request(
                "POST", AuthEndpointTests.identity + "accounts:update", body: #"{"localId":"\#(uid)","disableUser":true}"#,
                headers: TestServer.adminHeaders.merging(["Content-Type": "application/json"]) { $1 })
            #expect(disabled.status == 200, "\(disabled.text)")
            let token = try await Self.call(server, "POST", "/.hearth/session/token", cookie: "hearth_session_\(server.port)=\(refreshToken)")
            #expect(token.status == 400)
            #expect(Self.errorMessage(token) == "USER_DISABLED")
            #expect(token.header("Set-Cookie")?.contains("Max-Age=0") == true)
        }
    }
}
