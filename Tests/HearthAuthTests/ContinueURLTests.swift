import Foundation
import HearthTesting
import Testing
@testable import HearthAuth

/// Where the account service lets a user be sent on to: an emailed link's `continueUrl`
/// (resets, verification, email-link sign-in) and a provider sign-in's `continueUri`, each read
/// as a browser reads it and its host compared exactly with the authorized domains.
@Suite struct ContinueURLTests {
    static let invalid = AuthError("INVALID_CONTINUE_URI", detail: "((expected an absolute URI with valid scheme and host))")
    static let unauthorized = AuthError("UNAUTHORIZED_DOMAIN", detail: "Domain not allowlisted by project")

    static var policy: AuthService.Policy {
        var policy = AuthService.Policy()
        policy.authorizedDomains = ["app.example.com", "127.0.0.1", "localhost", "::1"]
        return policy
    }

    /// Tricky URLs and what an app's request for a link continuing there gets.
    static let cases: [(url: String, refusal: AuthError?)] = [
        (#"http://evil.example\@127.0.0.1/"#, invalid),
        (#"http://127.0.0.1\@evil.example/"#, invalid),
        ("http://evil.example@127.0.0.1/", invalid),
        ("http://127.0.0.1@evil.example/", invalid),
        ("http://app.example.com%2eevil.example/", invalid),
        ("http://%65vil.example/", invalid),
        ("http://app.exa\tmple.com/", invalid),
        ("http://app.example.com\n/done", invalid),
        ("http://app.example.com/do ne", invalid),
        ("//evil.example/", invalid),
        ("http:evil.example", invalid),
        ("http:///evil.example", invalid),
        ("javascript:alert(1)", invalid),
        ("ftp://app.example.com/", invalid),
        ("https://app.example.com./", invalid),
        ("https://evil.com.127.0.0.1/", invalid),
        ("http://0x7f.0.0.1/", invalid),
        ("http://2130706433/", invalid),
        ("http://[::1%25lo]/", invalid),
        ("https://evil.example/", unauthorized),
        ("https://app.example.com.evil.example/", unauthorized),
        ("https://sub.app.example.com/", unauthorized),
        ("https://127.0.0.1.evil.example/", unauthorized),
        ("http://[::2]:9000/", unauthorized),
        ("https://APP.Example.COM/done?x=1#y", nil),
        ("https://app.example.com:8443/done", nil),
        ("http://127.0.0.1:9000/", nil),
        ("http://[::1]:9000/done", nil),
        ("http://[0:0::1]/done", nil),
        ("http://localhost/done?next=%2F", nil),
    ]

    @Test func emailedLinksContinueOnlyToAuthorizedHostsWrittenPlainly() async throws {
        try await ActionCodeTests.withService(policy: Self.policy) { service, _, _ in
            for (index, (url, refusal)) in Self.cases.enumerated() {
                var request = AuthService.ActionCodeRequest(kind: .passwordReset)
                request.email = "nobody\(index)@example.com"
                request.continueURL = url
                request.client = "203.0.113.9"
                if let refusal {
                    await #expect(throws: refusal, "\(url.debugDescription)") { _ = try await service.sendActionCode(request) }
                } else {
                    // Accepted: the answer for an unknown address is the same as for a known one.
                    let issued = try await service.sendActionCode(request)
                    #expect(issued.email == "nobody\(index)@example.com", "\(url.debugDescription)")
                }
            }
        }
    }

    @Test func emailLinkSignInContinuesOnlyToAuthorizedHosts() async throws {
        var policy = Self.policy
        policy.emulator = true
        try await AuthServiceTests.withService(policy: policy) { service, _ in
            for (url, expected) in [(#"http://evil.example\@127.0.0.1/"#, Self.invalid), ("https://evil.example/", Self.unauthorized)] {
                var request = AuthService.ActionCodeRequest(kind: .emailSignIn)
                request.email = "alice@example.com"
                request.continueURL = url
                await #expect(throws: expected) { _ = try await service.sendActionCode(request) }
            }
            let listed = try await service.listedActionCodes()
            #expect(listed.isEmpty)
        }
    }

    @Test func adminLinksMayContinueAnywhereButStillPlainly() async throws {
        try await AuthServiceTests.withService(policy: Self.policy) { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: AuthServiceTests.password)
            var request = AuthService.ActionCodeRequest(kind: .passwordReset)
            request.email = "alice@example.com"
            request.isAdmin = true
            request.returnLink = true
            request.continueURL = "https://partner.example.org/welcome"
            let issued = try await service.sendActionCode(request)
            let continued = URLComponents(string: issued.link)?.queryItems?.first { $0.name == "continueUrl" }?.value
            #expect(continued == "https://partner.example.org/welcome")
            request.continueURL = #"http://evil.example\@127.0.0.1/"#
            await #expect(throws: Self.invalid) { _ = try await service.sendActionCode(request) }
        }
    }

    @Test func providerSignInsReturnOnlyToAuthorizedHostsWrittenPlainly() async throws {
        let github = FakeGitHub()
        try await AuthServiceTests.withService(policy: Self.policy, http: github) { service, _ in
            try await FakeGitHub.install(on: service)
            for (url, refusal) in Self.cases {
                if let refusal {
                    let expected = refusal.code == "INVALID_CONTINUE_URI" ? AuthError("INVALID_CONTINUE_URI") : refusal
                    await #expect(throws: expected, "\(url.debugDescription)") {
                        _ = try await service.startSignIn(providerID: "github.com", continueURI: url)
                    }
                } else if !url.contains("#") {
                    let started = try await service.startSignIn(providerID: "github.com", continueURI: url)
                    let redirect = try #require(URLComponents(string: started.authURI)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
                    #expect(url.hasPrefix(redirect), "\(url)")
                }
            }
            // A fragment cannot come back from a provider.
            await #expect(throws: AuthError("INVALID_CONTINUE_URI")) {
                _ = try await service.startSignIn(providerID: "github.com", continueURI: "https://app.example.com/h#x")
            }
        }
    }

    @Test func theProvidersRedirectMustBeWrittenPlainlyToo() throws {
        let handler = "https://app.example.com/__/auth/handler"
        #expect(try AuthService.redirectParameters(handler + "?code=c&state=s", expecting: handler)["code"] == "c")
        for requestURI in [
            #"https://app.example.com/__/auth/handler\?code=c&state=s"#,
            "https://app.example.com/__/auth/handler?code=c&state=s\n",
            "https://evil.example@app.example.com/__/auth/handler?code=c&state=s",
            "https://APP.example.com/__/auth/handler?code=c&state=s",
        ] {
            #expect(throws: AuthError.self, "\(requestURI.debugDescription)") {
                try AuthService.redirectParameters(requestURI, expecting: handler)
            }
        }
    }
}
