import Foundation
@testable import HearthAuth
import HearthCore
import Testing

/// The pure parts of provider sign-in: PKCE, the provider's redirect, settings of providers.
/// (The whole flow runs against a real OpenID provider in Tests/Accounts and Tests/Browser.)
@Suite struct FederatedSignInTests {
    /// RFC 7636, appendix B.
    @Test func theCodeChallengeIsRFC7636s() {
        #expect(IdentityProviderClient.codeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func theRedirectMustComeBackToWhereTheSignInStarted() throws {
        let parameters = try AuthService.redirectParameters(
            "https://app.example.com/__/auth/handler?code=abc&state=xyz", expecting: "https://app.example.com/__/auth/handler")
        #expect(parameters["code"] == "abc" && parameters["state"] == "xyz")
        // Parameters in the fragment (some providers answer so) count too.
        let fragment = try AuthService.redirectParameters(
            "https://app.example.com/__/auth/handler#code=c2&state=s2", expecting: "https://app.example.com/__/auth/handler")
        #expect(fragment["code"] == "c2" && fragment["state"] == "s2")
        for other in ["https://evil.example.com/__/auth/handler?code=a&state=b", "https://app.example.com/other?code=a&state=b"] {
            #expect(throws: AuthError.self) {
                try AuthService.redirectParameters(other, expecting: "https://app.example.com/__/auth/handler")
            }
        }
    }

    @Test func secretsCompareWhole() {
        #expect(AuthService.sameSecret("abc", "abc"))
        #expect(!AuthService.sameSecret("abc", "abd"))
        #expect(!AuthService.sameSecret("abc", "abcd"))
        #expect(AuthService.randomToken() != AuthService.randomToken())
    }

    @Test func providerIDsAndConfigurationsAreChecked() throws {
        #expect(ProviderConfig.Kind(providerID: "oidc.corp") == .oidc)
        #expect(ProviderConfig.Kind(providerID: "saml.corp") == .saml)
        #expect(ProviderConfig.Kind(providerID: "github.com") == .builtIn)
        #expect(ProviderConfig.Kind(providerID: "myspace.com") == nil)
        #expect(AuthService.isValidProviderID("oidc.corp-sso_1"))
        #expect(!AuthService.isValidProviderID("oidc."))
        #expect(!AuthService.isValidProviderID("oidc.a/b"))

        func config(_ entries: [(String, Node)]) -> ProviderConfig {
            ProviderConfig(id: "oidc.x", kind: .oidc, resource: .object(entries.map { (ChildKey($0.0), $0.1) }))
        }
        func refusal(_ config: ProviderConfig) -> String? {
            do {
                _ = try config.validated()
                return nil
            } catch {
                return error.code
            }
        }
        #expect(refusal(config([("issuer", .string("https://sso.example.com"))])) == "MISSING_OAUTH_CLIENT_ID")
        #expect(refusal(config([("clientId", .string("c"))])) == "MISSING_ISSUER")
        #expect(refusal(config([("clientId", .string("c")), ("issuer", .string("sso.example.com"))])) == "INVALID_CONFIG")
        #expect(refusal(config([
            ("clientId", .string("c")), ("issuer", .string("https://sso.example.com")),
            ("responseType", .object([(ChildKey("code"), .bool(true))])),
        ])) == "MISSING_OAUTH_CLIENT_SECRET")
        let good = config([("clientId", .string("c")), ("issuer", .string("https://sso.example.com")), ("enabled", .bool(false))])
        #expect(refusal(good) == nil)
        #expect(!good.enabled)
        // Served as Firebase's resource, named after the project.
        #expect(good.served(project: "p").child(ChildKey("name")) == .string("projects/p/oauthIdpConfigs/oidc.x"))
        // Built-in OpenID providers are known by their issuers.
        #expect(ProviderConfig(id: "google.com", kind: .builtIn, resource: .null).issuer == "https://accounts.google.com")
    }

    @Test func gitHubEnterpriseIsReachedAtItsOwnAddress() throws {
        let enterprise = ProviderConfig(
            id: "github.com", kind: .builtIn, resource: .object([(ChildKey("githubURL"), .string("https://git.example.com/"))]))
        let endpoints = try #require(GitHubEndpoints(enterprise))
        #expect(endpoints.authorize == "https://git.example.com/login/oauth/authorize")
        #expect(endpoints.user == "https://git.example.com/api/v3/user")
        #expect(try #require(GitHubEndpoints(ProviderConfig(id: "github.com", kind: .builtIn, resource: .null))).user
            == "https://api.github.com/user")
        #expect(GitHubEndpoints(ProviderConfig(id: "oidc.x", kind: .oidc, resource: .null)) == nil)
    }
}
