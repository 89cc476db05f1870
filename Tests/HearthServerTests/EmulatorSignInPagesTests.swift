import Foundation
import HearthServer
import HearthTesting
import Testing

/// The Auth emulator's sign-in pages for the SDKs' popups and redirects
/// (`/emulator/auth/handler`, `/emulator/auth/iframe`, their files and the accounts they offer)
/// and fake provider credentials, on a real server over HTTP: served with their headers in
/// emulator mode only, and unknown (`NOT_FOUND`, nothing signs in) without it.
@Suite("Emulator sign-in pages")
struct EmulatorSignInPagesTests {
    /// The web folder in the repository, which holds `emulator/auth/`.
    static let webFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/HearthWeb/Resources")
    static let handler = "/emulator/auth/handler?apiKey=fake-api-key&appName=%5BDEFAULT%5D&authType=signInViaRedirect"
        + "&redirectUrl=http%3A%2F%2Flocalhost%3A5000%2F&v=9.8.1&eventId=123&providerId=google.com"
    static let iframe = "/emulator/auth/iframe?apiKey=fake-api-key&appName=%5BDEFAULT%5D&v=9.8.1"
    static let claims = #"{"sub":"abc123","email":"Foo@Example.com","email_verified":true,"name":"Foo Bar"}"#

    static func withServer(emulator: Bool = true, _ body: (TestServer) async throws -> Void) async throws {
        try await TestServer.with(configure: {
            $0.webFiles = WebFiles(folder: webFolder)
            $0.emulator = emulator
        }, body)
    }

    /// `accounts:signInWithIdp` with a credential in `postBody`, as `signInWithCredential` sends it.
    static func signIn(_ server: TestServer, idToken: String, providerID: String = "google.com", linking: String? = nil) async throws -> HTTPResult {
        var body: [String: Any] = [
            "postBody": AuthEndpointTests.form([("id_token", idToken), ("providerId", providerID)]), "requestUri": "http://localhost",
            "returnSecureToken": true, "returnIdpCredential": true,
        ]
        if let linking { body["idToken"] = linking }
        return try await AuthEndpointTests.post(server, "accounts:signInWithIdp?key=fake-api-key", body)
    }

    @Test func pagesAreServedWithTheirHeadersInEmulatorMode() async throws {
        try await Self.withServer { server in
            let page = try await server.request("GET", Self.handler)
            #expect(page.status == 200, "\(page.text)")
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.text.contains(#"<script src="handler.js""#))
            let policy = try #require(page.header("Content-Security-Policy"))
            #expect(policy.contains("script-src 'self';"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            // A popup keeps its opener, which it hands the result to.
            #expect(page.header("Cross-Origin-Opener-Policy") == nil)

            let frame = try await server.request("GET", Self.iframe)
            #expect(frame.status == 200, "\(frame.text)")
            #expect(frame.text.contains(#"<script src="iframe.js""#))
            let framePolicy = try #require(frame.header("Content-Security-Policy"))
            #expect(framePolicy.contains("script-src 'self' https://apis.google.com"))
            #expect(framePolicy.contains("frame-ancestors *"))
            #expect(frame.header("X-Frame-Options") == nil)

            for file in ["handler.js", "iframe.js"] {
                let script = try await server.request("GET", "/emulator/auth/" + file)
                #expect(script.status == 200)
                #expect(script.header("Content-Type")?.contains("javascript") == true, "\(file)")
            }
            let style = try await server.request("GET", "/emulator/auth/handler.css")
            #expect(style.header("Content-Type")?.hasPrefix("text/css") == true)

            // Only the pages' own files; the handler needs what a sign-in needs.
            AuthEndpointTests.expectError(try await server.request("GET", "/emulator/auth/handler.html"), "NOT_FOUND", status: 404)
            AuthEndpointTests.expectError(try await server.request("GET", "/emulator/auth/nothing"), "NOT_FOUND", status: 404)
            let bare = try await server.request("GET", "/emulator/auth/handler?apiKey=k")
            #expect(bare.status == 400, "\(bare.text)")
        }
    }

    @Test func pagesAndFakeCredentialsAreUnknownOutsideEmulatorMode() async throws {
        try await Self.withServer(emulator: false) { server in
            for path in [Self.handler, Self.iframe, "/emulator/auth/handler.js", "/emulator/auth/accounts?providerId=google.com"] {
                AuthEndpointTests.expectError(try await server.request("GET", path), "NOT_FOUND", status: 404)
            }
            let refused = try await Self.signIn(server, idToken: Self.claims)
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refused.text.contains("INVALID_PROVIDER_ID"), "\(refused.text)")
            let listed = try await AuthEndpointTests.post(server, "accounts:lookup", ["email": ["foo@example.com"]], headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
            #expect((try AuthEndpointTests.object(listed))["users"] == nil, "nobody was signed up: \(listed.text)")
        }
    }

    @Test func jsonClaimsSignInAndTheHandlerOffersTheAccountAgain() async throws {
        try await Self.withServer { server in
            // signInWithCredential(GoogleAuthProvider.credential('{"sub": …}')): no provider configured.
            let first = try AuthEndpointTests.object(try await Self.signIn(server, idToken: Self.claims))
            let uid = try #require(first["localId"] as? String)
            #expect(first["providerId"] as? String == "google.com")
            #expect(first["email"] as? String == "foo@example.com")
            #expect(first["emailVerified"] as? Bool == true)
            #expect(first["displayName"] as? String == "Foo Bar")
            #expect(first["isNewUser"] as? Bool == true)
            #expect(first["oauthIdToken"] as? String == Self.claims)
            #expect(first["idToken"] is String && first["refreshToken"] is String)
            #expect(AuthEndpointTests.payload(first["idToken"] as? String ?? "")?["firebase"].flatMap { ($0 as? [String: Any])?["sign_in_provider"] } as? String == "google.com")

            // The same `sub` again is the same account.
            let again = try AuthEndpointTests.object(try await Self.signIn(server, idToken: Self.claims))
            #expect(again["localId"] as? String == uid)
            #expect(again["isNewUser"] as? Bool == false)

            // As the handler page hands it back: the claims in the requestUri's query.
            var page = URLComponents(string: "http://127.0.0.1/emulator/auth/handler")!
            page.queryItems = [.init(name: "providerId", value: "google.com"), .init(name: "id_token", value: Self.claims)]
            let viaPage = try AuthEndpointTests.object(try await AuthEndpointTests.post(
                server, "accounts:signInWithIdp?key=fake-api-key",
                ["requestUri": page.url!.absoluteString, "sessionId": "anything", "returnSecureToken": true, "returnIdpCredential": true]))
            #expect(viaPage["localId"] as? String == uid)

            // The handler lists it for Google, not for GitHub.
            let listed = try AuthEndpointTests.object(try await server.request("GET", "/emulator/auth/accounts?providerId=google.com"))
            let accounts = listed["accounts"] as? [[String: Any]] ?? []
            #expect(accounts.count == 1)
            #expect(accounts.first?["rawId"] as? String == "abc123")
            #expect(accounts.first?["email"] as? String == "foo@example.com")
            #expect(accounts.first?["displayName"] as? String == "Foo Bar")
            let none = try AuthEndpointTests.object(try await server.request("GET", "/emulator/auth/accounts?providerId=github.com"))
            #expect((none["accounts"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func unsignedJWTsLinkingAndBadClaims() async throws {
        try await Self.withServer { server in
            // A JWT for a provider Hearth has no configuration for is read unverified.
            let header = AuthEndpointTests.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let payload = AuthEndpointTests.base64URL(Data(#"{"sub":"apple-1","email":"ann@example.com","email_verified":"true"}"#.utf8))
            let jwt = try AuthEndpointTests.object(try await Self.signIn(server, idToken: "\(header).\(payload).", providerID: "apple.com"))
            #expect(jwt["providerId"] as? String == "apple.com")
            #expect(jwt["emailVerified"] as? Bool == true)

            // Linking to an anonymous account keeps its uid.
            let anonymous = try AuthEndpointTests.object(try await AuthEndpointTests.post(server, "accounts:signUp", ["returnSecureToken": true]))
            let anonymousUID = try #require(anonymous["localId"] as? String)
            let linked = try AuthEndpointTests.object(try await Self.signIn(
                server, idToken: #"{"sub":"gh-7","email":"gina@example.com"}"#, providerID: "github.com",
                linking: anonymous["idToken"] as? String))
            #expect(linked["localId"] as? String == anonymousUID)
            #expect(linked["emailVerified"] as? Bool == false)

            for bad in [#"{"email":"x@example.com"}"#, #"{"sub":5}"#, #"{"sub":"#, "not-a-token"] {
                let refused = try await Self.signIn(server, idToken: bad)
                #expect(refused.status == 400, "\(bad): \(refused.text)")
                #expect(refused.text.contains("INVALID_IDP_RESPONSE"), "\(bad): \(refused.text)")
            }
        }
    }
}
