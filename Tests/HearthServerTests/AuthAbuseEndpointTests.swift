import Foundation
import HearthServer
import HearthTesting
import Testing

/// The account protections of issue 29 over HTTP, as a browser (behind this machine's proxy,
/// which names it in `X-Forwarded-For`) meets them: Firebase's error bodies, counted per browser
/// address, with admins exempt.
@Suite("Auth endpoints: abuse and sensitive changes")
struct AuthAbuseEndpointTests {
    static let password = AuthEndpointTests.password

    /// POSTs `body` to `accounts:<method>` as the browser at `address`.
    static func post(
        _ server: TestServer, _ endpoint: String, _ body: [String: Any], from address: String, headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        try await AuthEndpointTests.post(server, endpoint, body, headers: headers.merging(["X-Forwarded-For": address]) { mine, _ in mine })
    }

    @Test func signUpsAreLimitedPerBrowserAddressExceptForAdmins() async throws {
        try await withServer(configure: {
            // Emulator mode has no sign-up limit, as Firebase's emulator has none.
            $0.emulator = false
            $0.signUpBurstPerAddress = 2
            $0.signUpsPerAddressPerHour = 1
        }) { server in
            _ = try AuthEndpointTests.object(try await Self.post(server, "accounts:signUp", ["returnSecureToken": true], from: "203.0.113.5"))
            _ = try AuthEndpointTests.object(try await Self.post(
                server, "accounts:signUp", ["email": "a@example.com", "password": Self.password], from: "203.0.113.5"))
            for body in [["returnSecureToken": true], ["email": "b@example.com", "password": Self.password]] as [[String: Any]] {
                AuthEndpointTests.expectError(
                    try await Self.post(server, "accounts:signUp", body, from: "203.0.113.5"),
                    "TOO_MANY_ATTEMPTS_TRY_LATER : We have blocked all requests from this device due to unusual activity. Try again later.")
            }
            // Another browser behind the same proxy is not affected, nor is an admin.
            _ = try AuthEndpointTests.object(try await Self.post(server, "accounts:signUp", [:], from: "203.0.113.6"))
            _ = try AuthEndpointTests.object(try await Self.post(
                server, "accounts:signUp", ["email": "b@example.com", "password": Self.password], from: "203.0.113.5",
                headers: TestServer.adminHeaders))
        }
    }

    @Test func failuresFromRotatingAddressesDoNotLockTheOwnerOut() async throws {
        try await withServer { server in
            _ = try await AuthEndpointTests.signUp(server, "dana@example.com")
            for attempt in 0..<12 {
                AuthEndpointTests.expectError(
                    try await Self.post(
                        server, "accounts:signInWithPassword", ["email": "dana@example.com", "password": "guess\(attempt)"],
                        from: "198.51.100.\(attempt)"),
                    "INVALID_LOGIN_CREDENTIALS")
            }
            _ = try AuthEndpointTests.object(try await Self.post(
                server, "accounts:signInWithPassword", ["email": "dana@example.com", "password": Self.password], from: "203.0.113.7"))
        }
    }

    @Test func unlinkingWithAStaleTokenIsCredentialTooOld() async throws {
        let clock = TestClock(start: Int64(Date().timeIntervalSince1970 * 1000))
        try await withServer(configure: { $0.clock = { clock.now } }) { server in
            let signedUp = try await AuthEndpointTests.signUp(server, "erin@example.com")
            let idToken = try #require(signedUp["idToken"] as? String)
            clock.advance(by: 29 * 60 * 1000)
            AuthEndpointTests.expectError(
                try await AuthEndpointTests.post(server, "accounts:update", ["idToken": idToken, "deleteProvider": ["password"]]),
                "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
            // The password still signs in.
            _ = try AuthEndpointTests.object(try await AuthEndpointTests.post(
                server, "accounts:signInWithPassword", ["email": "erin@example.com", "password": Self.password]))
        }
    }

    @Test func continueURLsAreReadAsBrowsersReadThem() async throws {
        try await withServer { server in
            _ = try await AuthEndpointTests.signUp(server, "finn@example.com")
            for url in [#"http://evil.example\@127.0.0.1/"#, "http://evil.example@127.0.0.1/", "http://127.0.0.1\t/", "//evil.example/"] {
                AuthEndpointTests.expectError(
                    try await AuthEndpointTests.post(
                        server, "accounts:sendOobCode", ["requestType": "PASSWORD_RESET", "email": "finn@example.com", "continueUrl": url]),
                    "INVALID_CONTINUE_URI : ((expected an absolute URI with valid scheme and host))")
            }
        }
        try await withServer(configure: { $0.emulator = false }) { server in
            AuthEndpointTests.expectError(
                try await AuthEndpointTests.post(
                    server, "accounts:sendOobCode",
                    ["requestType": "PASSWORD_RESET", "email": "finn@example.com", "continueUrl": "http://127.0.0.1.evil.example/"]),
                "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project")
        }
    }
}
