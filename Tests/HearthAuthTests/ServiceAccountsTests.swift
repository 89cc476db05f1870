import Foundation
import HearthCore
import HearthTesting
import JWTKit
import Logging
import Testing
@testable import HearthAuth

/// Service accounts with real keys and an injected clock: what a key file holds, which
/// assertions get an access token, how long the token works, and what revoking does.
/// (Tests/Accounts/test_service_accounts.py does the same through firebase_admin and google-auth.)
@Suite struct ServiceAccountsTests {
    static let tokenURI = "https://hearth.example.com/oauth2/token"

    /// The claims of an assertion as google-auth makes them.
    struct Assertion: JWTPayload {
        var iss: String
        var sub: String?
        var aud: String
        var iat: Int64
        var exp: Int64
        var scope = "https://www.googleapis.com/auth/cloud-platform"

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func withAccounts(_ body: (ServiceAccounts, AuthService, TestClock) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-service-accounts")
        defer { directory.remove() }
        let clock = TestClock()
        let logger = Logger(label: "service-accounts", factory: { _ in SwiftLogNoOpLogHandler() })
        let service = try await AuthService.open(
            in: directory.url.appendingPathComponent("auth"), projectID: "proj", hasher: PasswordHasher(rounds: 1 << 10),
            clock: { clock.now }, logger: logger)
        let accounts = ServiceAccounts(store: service.store, issuer: service.issuer, clock: { clock.now }, logger: logger)
        try await body(accounts, service, clock)
    }

    /// `claims` signed with the key file's private key, naming `kid` (default: the file's key).
    static func sign(_ claims: Assertion, with file: ServiceAccountKeyFile, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PrivateKey(pem: file.privateKey), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: kid ?? file.privateKeyID))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid ?? file.privateKeyID))
    }

    static func assertion(_ file: ServiceAccountKeyFile, now: Int64, aud: String = tokenURI) -> Assertion {
        Assertion(iss: file.clientEmail, sub: file.clientEmail, aud: aud, iat: now / 1000, exp: now / 1000 + 3600)
    }

    @Test func aKeyFileIsGooglesFormWithThePrivateKeyOnlyThere() async throws {
        try await Self.withAccounts { accounts, _, _ in
            let (key, file) = try await accounts.create(name: "ops-robot", tokenURI: Self.tokenURI)
            #expect(file.type == "service_account" && file.projectID == "proj" && file.tokenURI == Self.tokenURI)
            #expect(file.clientEmail == "ops-robot@proj.iam.gserviceaccount.com" && file.privateKeyID == key.id)
            #expect(file.privateKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(key.publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----") && !key.publicKeyPEM.contains("PRIVATE"))
            #expect(try await accounts.keys() == [key])
            let json = String(decoding: try JSONEncoder().encode(file), as: UTF8.self)
            for field in ["\"private_key_id\"", "\"client_email\"", "\"token_uri\"", "\"project_id\""] { #expect(json.contains(field)) }
            for name in ["short", "Upper-Case", "1starts-with-digit", "ends-with-", String(repeating: "a", count: 31)] {
                await #expect(throws: AuthError.self) { _ = try await accounts.create(name: name, tokenURI: Self.tokenURI) }
            }
            await #expect(throws: AuthError.self) { _ = try await accounts.create(name: "ops-robot", tokenURI: "ftp://x/token") }
            #expect(try await accounts.keys().count == 1, "a refused name makes no key")
        }
    }

    @Test func anAccessTokenWorksForAnHourAndOnlyAsAnAccessToken() async throws {
        try await Self.withAccounts { accounts, service, clock in
            let (key, file) = try await accounts.create(name: "ops-robot", tokenURI: Self.tokenURI)
            // google-auth addresses its assertions to Google's endpoint whatever the file says.
            for audience in [Self.tokenURI, "https://oauth2.googleapis.com/token"] {
                let (token, lifetime) = try await accounts.exchange(
                    assertion: try await Self.sign(Self.assertion(file, now: clock.now, aud: audience), with: file))
                #expect(lifetime == 3600 && token.hasPrefix(TokenIssuer.accessTokenPrefix))
                #expect(await accounts.verify(accessToken: token) == key)
            }
            let (token, _) = try await accounts.exchange(assertion: try await Self.sign(Self.assertion(file, now: clock.now), with: file))
            // Not an ID token, and an ID token is not an access token.
            await #expect(throws: AuthError.self) { _ = try await service.user(idToken: token) }
            let signedIn = try await service.signUp(email: "alice@example.com", password: "correct horse")
            #expect(await accounts.verify(accessToken: signedIn.idToken) == nil)
            #expect(await accounts.verify(accessToken: TokenIssuer.accessTokenPrefix + signedIn.idToken) == nil)
            #expect(await accounts.verify(accessToken: token + "x") == nil)
            clock.advance(by: 3_599_000)
            #expect(await accounts.verify(accessToken: token) != nil)
            clock.advance(by: 1000)
            #expect(await accounts.verify(accessToken: token) == nil, "expired after an hour")
        }
    }

    @Test func badAssertionsGetNoToken() async throws {
        try await Self.withAccounts { accounts, _, clock in
            let (_, file) = try await accounts.create(name: "ops-robot", tokenURI: Self.tokenURI)
            let (_, other) = try await accounts.create(name: "other-robot", tokenURI: Self.tokenURI)
            let now = clock.now
            var expired = Self.assertion(file, now: now - 7_200_000)
            expired.exp = now / 1000 - 1
            var tooLong = Self.assertion(file, now: now)
            tooLong.exp = now / 1000 + 3601
            var future = Self.assertion(file, now: now + 120_000)
            future.exp = future.iat + 60
            var otherIssuer = Self.assertion(file, now: now)
            otherIssuer.iss = other.clientEmail
            otherIssuer.sub = nil
            let cases: [(String, String)] = [
                ("signed by another key under this key's ID", try await Self.sign(Self.assertion(file, now: now), with: other, kid: file.privateKeyID)),
                ("an unknown key", try await Self.sign(Self.assertion(file, now: now), with: file, kid: "unknown")),
                ("expired", try await Self.sign(expired, with: file)),
                ("valid for more than an hour", try await Self.sign(tooLong, with: file)),
                ("issued two minutes ahead", try await Self.sign(future, with: file)),
                ("issued by another account", try await Self.sign(otherIssuer, with: file)),
                ("addressed elsewhere", try await Self.sign(Self.assertion(file, now: now, aud: "https://elsewhere.example/token"), with: file)),
                ("not a JWT", "not.a.jwt"),
                ("unsigned", TokenIssuerTests.base64URL(#"{"alg":"none","kid":"\#(file.privateKeyID)"}"#) + "." + TokenIssuerTests.base64URL(#"{"iss":"x"}"#) + "."),
            ]
            for (name, assertion) in cases {
                let refusal = await #expect(throws: OAuthError.self, "\(name)") { _ = try await accounts.exchange(assertion: assertion) }
                #expect(refusal?.error == "invalid_grant", "\(name)")
            }
            await #expect(throws: OAuthError("invalid_request", "Missing required parameter: assertion")) {
                _ = try await accounts.exchange(assertion: nil)
            }
        }
    }

    @Test func revokingStopsNewTokensAtOnceAndGivenOnesWithinTheRecheck() async throws {
        try await Self.withAccounts { accounts, _, clock in
            let (key, file) = try await accounts.create(name: "ops-robot", tokenURI: Self.tokenURI)
            let (_, kept) = try await accounts.create(name: "kept-robot", tokenURI: Self.tokenURI)
            let (token, _) = try await accounts.exchange(assertion: try await Self.sign(Self.assertion(file, now: clock.now), with: file))
            let (keptToken, _) = try await accounts.exchange(assertion: try await Self.sign(Self.assertion(kept, now: clock.now), with: kept))
            #expect(await accounts.verify(accessToken: token) != nil)
            // Revoked behind this object's back (another process, another node).
            #expect(try await accounts.store.revokeServiceAccountKey(id: key.id, now: clock.now))
            await #expect(throws: OAuthError.self) {
                _ = try await accounts.exchange(assertion: try await Self.sign(Self.assertion(file, now: clock.now), with: file))
            }
            clock.advance(by: ServiceAccounts.recheckMilliseconds)
            #expect(await accounts.verify(accessToken: token) == nil)
            #expect(await accounts.verify(accessToken: keptToken) != nil, "another key is untouched")
            // Revoking through the object is seen at once; an address revokes all its keys.
            #expect(try await accounts.revoke(kept.clientEmail).map(\.id) == [kept.privateKeyID])
            #expect(await accounts.verify(accessToken: keptToken) == nil)
            #expect(try await accounts.revoke(kept.clientEmail).isEmpty)
        }
    }

    @Test func aCustomTokenSignedWithAServiceAccountsKeySignsIn() async throws {
        try await Self.withAccounts { accounts, service, clock in
            let (key, file) = try await accounts.create(name: "ops-robot", tokenURI: Self.tokenURI)
            struct CustomToken: JWTPayload {
                var iss: String, sub: String, aud = TokenIssuer.customTokenAudience, iat: Int64, exp: Int64, uid: String
                func verify(using algorithm: some JWTAlgorithm) async throws {}
            }
            let keys = JWTKeyCollection()
            await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: file.privateKey), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id))
            let now = clock.now / 1000
            let token = try await keys.sign(
                CustomToken(iss: file.clientEmail, sub: file.clientEmail, iat: now, exp: now + 3600, uid: "made-by-robot"),
                kid: JWKIdentifier(string: key.id))
            #expect(try await service.signIn(customToken: token).user.uid == "made-by-robot")
            let forged = try await keys.sign(
                CustomToken(iss: "someone@proj.iam.gserviceaccount.com", sub: file.clientEmail, iat: now, exp: now + 3600, uid: "x"),
                kid: JWKIdentifier(string: key.id))
            await #expect(throws: AuthError.invalidCustomToken) { _ = try await service.signIn(customToken: forged) }
            _ = try await accounts.revoke(key.id)
            await #expect(throws: AuthError.invalidCustomToken) { _ = try await service.signIn(customToken: token) }
        }
    }
}
