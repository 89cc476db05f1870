import Testing

@testable import HearthServer

/// Which requests `GoogleAPIHostMiddleware` answers as Hearth's prefixed paths (the whole path,
/// through nginx and a stand-in for DNS, is in Tests/Accounts/test_service_accounts.py).
@Suite struct GoogleAPIHostTests {
    @Test func googlesAPIHostsAreKnownWithAnyPortAndCase() {
        #expect(GoogleAPIHostMiddleware.prefixedHost("identitytoolkit.googleapis.com") == "identitytoolkit.googleapis.com")
        #expect(GoogleAPIHostMiddleware.prefixedHost("IdentityToolkit.GoogleAPIs.com:443") == "identitytoolkit.googleapis.com")
        #expect(GoogleAPIHostMiddleware.prefixedHost("www.googleapis.com") == "www.googleapis.com")
        #expect(GoogleAPIHostMiddleware.prefixedHost("securetoken.googleapis.com:8443") == "securetoken.googleapis.com")
        #expect(GoogleAPIHostMiddleware.prefixedHost("oauth2.googleapis.com") == "oauth2.googleapis.com")
    }

    @Test func otherHostsAreLeftAlone() {
        for authority in [
            nil, "127.0.0.1:9000", "app.example.com", "storage.googleapis.com", "firebasestorage.googleapis.com",
            "identitytoolkit.googleapis.com.evil.example", "evil-identitytoolkit.googleapis.com", "googleapis.com",
        ] {
            #expect(GoogleAPIHostMiddleware.prefixedHost(authority) == nil, "\(authority ?? "nil")")
        }
    }
}
