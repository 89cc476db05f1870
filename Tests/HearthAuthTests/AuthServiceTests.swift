import Foundation
import HearthCore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthAuth

/// The account service end to end over a real SQLite store and a real signing key, with an
/// injected clock: sign-up, sign-in and its rate limits, refresh, sign-out, profile and
/// password changes, deletion, custom tokens, admin management, and what it logs.
@Suite struct AuthServiceTests {
    static let password = "correct horse"

    /// Runs `body` with a service kept in a fresh temporary directory and a clock set to `TestClock`'s start.
    static func withService(
        policy: AuthService.Policy = AuthService.Policy(),
        http: (any HTTPFetching)? = nil,
        logger: Logger = Logger(label: "hearth-auth-test", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ body: (AuthService, TestClock) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-auth")
        defer { directory.remove() }
        let clock = TestClock()
        // Cheap scrypt keeps the tests quick; the format and checks are the same.
        let service = try await AuthService.open(
            in: directory.url.appendingPathComponent("auth"), projectID: "proj", policy: policy,
            hasher: PasswordHasher(rounds: 1 << 10), http: http, clock: { clock.now }, logger: logger)
        try await body(service, clock)
    }

    /// The verified claims of an ID token at the service's current time.
    static func claims(_ token: String, _ service: AuthService, _ clock: TestClock) async throws -> Node {
        try await service.issuer.verifyIDToken(token, now: clock.now / 1000)
    }

    // MARK: - Sign-up

    @Test func signUpMakesAPasswordAccountWithASession() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "Alice@Example.COM", password: Self.password, displayName: "Alice")
            #expect(session.isNewUser)
            #expect(session.expiresIn == 3600)
            #expect(session.user.email == "alice@example.com")
            #expect(session.user.provider == "password")
            #expect(session.user.displayName == "Alice")
            #expect(session.user.uid.count == 28)
            #expect(session.user.createdAt == clock.now)
            #expect(!session.refreshToken.isEmpty)
            let claims = try await Self.claims(session.idToken, service, clock)
            #expect(claims.child(ChildKey("sub")) == .string(session.user.uid))
            #expect(claims.child(ChildKey("email")) == .string("alice@example.com"))
            #expect(claims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("password"))
            // Stored as a salted hash, never as the password.
            let stored = try #require(try await service.store.user(uid: session.user.uid))
            let hash = try #require(stored.passwordHash)
            #expect(hash.hasPrefix("scrypt$1024$"))
            #expect(!hash.contains(Self.password))
            #expect(try await service.user(idToken: session.idToken).uid == session.user.uid)
        }
    }

    @Test func signUpRefusesBadInputWithFirebasesCodes() async throws {
        try await Self.withService { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            await #expect(throws: AuthError.emailExists) {
                try await service.signUp(email: "ALICE@example.com", password: "another1")
            }
            let weak = await #expect(throws: AuthError.self) { try await service.signUp(email: "bob@example.com", password: "12345") }
            #expect(weak?.message == "WEAK_PASSWORD : Password should be at least 6 characters")
            for email in ["not-an-email", "a@", "@b.c", "a@b@c", "a b@c.d", "tab\t@c.d"] {
                await #expect(throws: AuthError.invalidEmail, "\(email)") {
                    try await service.signUp(email: email, password: Self.password)
                }
            }
            await #expect(throws: AuthError.missingPassword) { try await service.signUp(email: "bob@example.com", password: nil) }
            await #expect(throws: AuthError.missingPassword) { try await service.signUp(email: "bob@example.com", password: "") }
            await #expect(throws: AuthError.missingEmail) { try await service.signUp(email: nil, password: Self.password) }
            #expect(try await service.store.count() == 1)
        }
    }

    @Test func anonymousSignUpMakesAnAccountWithoutEmail() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: nil, password: nil)
            #expect(session.isNewUser)
            #expect(session.user.isAnonymous)
            #expect(session.user.email == nil)
            #expect(session.user.passwordHash == nil)
            let claims = try await Self.claims(session.idToken, service, clock)
            #expect(claims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("anonymous"))
            #expect(claims.child(ChildKey("email")).isNull)
            #expect(try await service.store.user(uid: session.user.uid)?.provider == "anonymous")
        }
    }

    // MARK: - Sign-in

    @Test func signInWithTheRightPasswordGivesANewSession() async throws {
        try await Self.withService { service, clock in
            let signedUp = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 60_000)
            let session = try await service.signIn(email: "ALICE@example.com", password: Self.password, client: "10.0.0.1")
            #expect(session.user.uid == signedUp.user.uid)
            #expect(!session.isNewUser)
            #expect(session.refreshToken != signedUp.refreshToken)
            #expect(try await service.store.user(uid: signedUp.user.uid)?.lastLoginAt == clock.now)
            let claims = try await Self.claims(session.idToken, service, clock)
            #expect(claims.child(ChildKey("auth_time")) == .int(clock.now / 1000))
            // Both sessions work.
            _ = try await service.refresh(refreshToken: signedUp.refreshToken)
            _ = try await service.refresh(refreshToken: session.refreshToken)
        }
    }

    @Test func aWrongPasswordAndAnUnknownEmailLookTheSame() async throws {
        try await Self.withService { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "wrong password", client: "c")
            }
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "nobody@example.com", password: Self.password, client: "c")
            }
            // An empty password is missing rather than wrong.
            await #expect(throws: AuthError.missingPassword) {
                try await service.signIn(email: "alice@example.com", password: "", client: "c")
            }
        }
    }

    @Test func tooManyFailuresFromOneAddressBlockItAtThatAccountUntilTheWindowPasses() async throws {
        try await Self.withService { service, clock in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            // Nine failures (in either case) still allow the right password from that address…
            for attempt in 0..<9 {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: attempt.isMultiple(of: 2) ? "alice@example.com" : "ALICE@example.com",
                                             password: "wrong\(attempt)", client: "10.0.0.66")
                }
            }
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.66")
            // …which starts its count again; ten failures block even the right password there.
            for attempt in 0..<10 {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: "alice@example.com", password: "wrong\(attempt)", client: "10.0.0.66")
                }
            }
            let blocked = await #expect(throws: AuthError.self) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.66")
            }
            #expect(blocked?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
            // The account is not locked: its owner signs in from elsewhere.
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.7")
            clock.advance(by: 15 * 60 * 1000 - 1)
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.66")
            }
            clock.advance(by: 1)
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.66")
        }
    }

    @Test
    func concurrentGuessesDoNotGetPastTheLimit() async throws {
        try await Self.withService { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            // Guesses sent at once must not all be let through before any failure is counted.
            let codes = await withTaskGroup(of: String.self) { group in
                for attempt in 0..<40 {
                    group.addTask {
                        do {
                            _ = try await service.signIn(email: "alice@example.com", password: "guess\(attempt)", client: "10.0.0.66")
                            return "OK"
                        } catch {
                            return (error as? AuthError)?.code ?? "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "INVALID_LOGIN_CREDENTIALS" }.count <= 10)
            #expect(codes.filter { $0 == "TOO_MANY_ATTEMPTS_TRY_LATER" }.count >= 30)
        }
    }

    @Test func rightPasswordsSentAtOnceAllSignIn() async throws {
        try await Self.withService { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            // More sign-ins at once than the failure limit: they wait their turn, none is refused.
            let codes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<25 {
                    group.addTask {
                        do {
                            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.1")
                            return "OK"
                        } catch {
                            return (error as? AuthError)?.code ?? "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: "OK", count: 25))
        }
    }

    @Test func tooManyFailuresFromOneAddressBlockThatAddress() async throws {
        var policy = AuthService.Policy()
        policy.failuresPerAddress = 3
        try await Self.withService(policy: policy) { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            _ = try await service.signUp(email: "bob@example.com", password: Self.password)
            for email in ["alice@example.com", "nobody@example.com", "alice@example.com"] {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: email, password: "wrong password", client: "10.0.0.66")
                }
            }
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "bob@example.com", password: Self.password, client: "10.0.0.66")
            }
            // Other addresses are not affected.
            _ = try await service.signIn(email: "bob@example.com", password: Self.password, client: "10.0.0.7")
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "10.0.0.7")
        }
    }

    @Test func aDisabledAccountCannotSignInOrRefresh() async throws {
        try await Self.withService { service, _ in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            var fields = AuthService.AccountFields()
            fields.disabled = true
            _ = try await service.updateUser(uid: session.user.uid, fields)
            await #expect(throws: AuthError.userDisabled) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            }
            await #expect(throws: AuthError.userDisabled) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.userDisabled) { try await service.user(idToken: session.idToken) }
            fields.disabled = false
            _ = try await service.updateUser(uid: session.user.uid, fields)
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
        }
    }

    // MARK: - Refresh and sign-out

    @Test func refreshGivesAFreshIDTokenAndKeepsTheRefreshToken() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            let signedUpAt = clock.now / 1000
            clock.advance(by: 50 * 60 * 1000)
            let refreshed = try await service.refresh(refreshToken: session.refreshToken)
            #expect(refreshed.refreshToken == session.refreshToken)
            #expect(refreshed.user.uid == session.user.uid)
            #expect(refreshed.idToken != session.idToken)
            let claims = try await Self.claims(refreshed.idToken, service, clock)
            #expect(claims.child(ChildKey("iat")) == .int(clock.now / 1000))
            #expect(claims.child(ChildKey("auth_time")) == .int(signedUpAt))
            #expect(claims.child(ChildKey("sub")) == .string(session.user.uid))
            await #expect(throws: AuthError.missingRefreshToken) { try await service.refresh(refreshToken: nil) }
            await #expect(throws: AuthError.missingRefreshToken) { try await service.refresh(refreshToken: "") }
            await #expect(throws: AuthError.invalidRefreshToken) { try await service.refresh(refreshToken: "not-a-token") }
        }
    }

    @Test func signOutRevokesRefreshTokensAndEarlierIDTokens() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            let other = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            clock.advance(by: 2000)
            try await service.signOut(idToken: session.idToken)
            // Firebase's answer for a revoked session, which makes its SDKs sign the user out.
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: other.refreshToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.user(idToken: session.idToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.user(idToken: other.idToken) }
            // Signing in again later works.
            clock.advance(by: 2000)
            let again = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            _ = try await service.refresh(refreshToken: again.refreshToken)
            #expect(try await service.user(idToken: again.idToken).uid == session.user.uid)
        }
    }

    @Test func signOutWithTheRefreshTokenEndsOnlyThatSession() async throws {
        try await Self.withService { service, clock in
            let phone = try await service.signUp(email: "alice@example.com", password: Self.password)
            let laptop = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            clock.advance(by: 2000)
            try await service.signOut(idToken: phone.idToken, refreshToken: phone.refreshToken)
            await #expect(throws: AuthError.invalidRefreshToken) { try await service.refresh(refreshToken: phone.refreshToken) }
            // The other device stays signed in.
            _ = try await service.refresh(refreshToken: laptop.refreshToken)
            #expect(try await service.user(idToken: laptop.idToken).uid == phone.user.uid)
            // Someone else's refresh token cannot be ended with your ID token.
            let bob = try await service.signUp(email: "bob@example.com", password: Self.password)
            await #expect(throws: AuthError.invalidRefreshToken) {
                try await service.signOut(idToken: laptop.idToken, refreshToken: bob.refreshToken)
            }
            _ = try await service.refresh(refreshToken: bob.refreshToken)
        }
    }

    @Test
    func aSignInRightAfterSignOutWorks() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 2000)
            try await service.signOut(idToken: session.idToken)
            clock.advance(by: 1)
            let again = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            _ = try await service.refresh(refreshToken: again.refreshToken)
            #expect(try await service.user(idToken: again.idToken).uid == session.user.uid)
        }
    }

    // MARK: - Profile, password and deletion

    @Test func aProfileChangeKeepsTheSession() async throws {
        try await Self.withService { service, _ in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            let (user, newSession) = try await service.update(
                idToken: session.idToken, .init(displayName: "Alice", photoURL: "https://example.com/a.png"))
            #expect(newSession == nil)
            #expect(user.displayName == "Alice")
            #expect(try await service.store.user(uid: user.uid)?.photoURL == "https://example.com/a.png")
            let (cleared, _) = try await service.update(idToken: session.idToken, .init(deleteAttributes: ["DISPLAY_NAME"]))
            #expect(cleared.displayName == nil)
            #expect(cleared.photoURL == "https://example.com/a.png")
            _ = try await service.refresh(refreshToken: session.refreshToken)
        }
    }

    @Test func aPasswordChangeGivesANewSessionAndEndsTheOldOnes() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 5000)
            let (_, changed) = try await service.update(idToken: session.idToken, .init(password: "new password"))
            let fresh = try #require(changed)
            #expect(fresh.refreshToken != session.refreshToken)
            #expect(!fresh.isNewUser)
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.user(idToken: session.idToken) }
            _ = try await service.refresh(refreshToken: fresh.refreshToken)
            #expect(try await service.user(idToken: fresh.idToken).uid == session.user.uid)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            }
            _ = try await service.signIn(email: "alice@example.com", password: "new password", client: "c")
            let weak = await #expect(throws: AuthError.self) {
                try await service.update(idToken: fresh.idToken, .init(password: "short"))
            }
            #expect(weak?.code == "WEAK_PASSWORD")
        }
    }

    /// Firebase's SDKs keep their refresh token unless the ID token answered beside it is new;
    /// a change in the same second as the sign-in must still hand over a different token.
    @Test func aPasswordChangeInTheSameSecondAsTheSignInGivesADifferentIDToken() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            let (_, changed) = try await service.update(idToken: session.idToken, .init(password: "new password"))
            let fresh = try #require(changed)
            let before = try await Self.claims(session.idToken, service, clock)
            let after = try await Self.claims(fresh.idToken, service, clock)
            // Every claim the same but the session's: the JSON's key order alone must not be
            // what tells them apart.
            #expect(before.child(ChildKey("iat")) == after.child(ChildKey("iat")))
            #expect(before.child(ChildKey("jti")) != after.child(ChildKey("jti")))
            // A refresh in the same second gives a new token too (the SDKs tell their listeners
            // only of a new one), of the same session.
            let refreshedToken = try await service.refresh(refreshToken: fresh.refreshToken).idToken
            #expect(refreshedToken != fresh.idToken)
            let refreshed = try await Self.claims(refreshedToken, service, clock)
            #expect(refreshed.child(ChildKey("iat")) == after.child(ChildKey("iat")))
            func sessionPart(_ claims: Node) -> Substring? {
                guard case .string(let jti) = claims.child(ChildKey("jti")) else { return nil }
                return jti.split(separator: ".").first
            }
            #expect(sessionPart(refreshed) == sessionPart(after) && sessionPart(refreshed) != nil, "one session")
            #expect(sessionPart(before) != sessionPart(after), "two sessions")
        }
    }

    @Test func passwordEmailChangesAndDeletionNeedARecentSignIn() async throws {
        try await Self.withService { service, clock in
            let signedUp = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 301_000)
            // A refreshed token keeps the old sign-in time: a stolen session cannot set a password.
            let refreshed = try await service.refresh(refreshToken: signedUp.refreshToken)
            for change in [AuthService.ProfileChange(password: "new password 1"), .init(email: "mallory@example.com")] {
                await #expect(throws: AuthError.credentialTooOld) { try await service.update(idToken: refreshed.idToken, change) }
            }
            await #expect(throws: AuthError.credentialTooOld) { try await service.delete(idToken: refreshed.idToken) }
            // Nothing changed, and everyday changes still work.
            let stored = try #require(try await service.store.user(uid: signedUp.user.uid))
            #expect(stored.email == "alice@example.com")
            #expect(try await service.signIn(email: "alice@example.com", password: Self.password, client: "c").user.uid == stored.uid)
            let (renamed, _) = try await service.update(idToken: refreshed.idToken, .init(displayName: "Alice"))
            #expect(renamed.displayName == "Alice")
            // Signing in again makes it recent.
            let again = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            let (changed, session) = try await service.update(idToken: again.idToken, .init(password: "new password 1"))
            #expect(changed.uid == stored.uid && session != nil)
        }
    }

    @Test func anAnonymousAccountGainsAnEmailAtAnyTime() async throws {
        try await Self.withService { service, clock in
            let anonymous = try await service.signUp(email: nil, password: nil)
            clock.advance(by: 24 * 3600 * 1000)
            let refreshed = try await service.refresh(refreshToken: anonymous.refreshToken)
            let (user, _) = try await service.update(idToken: refreshed.idToken, .init(email: "anon@example.com", password: Self.password))
            #expect(user.uid == anonymous.user.uid && user.provider == "password")
        }
    }

    @Test func aNewPasswordEndsTheOtherSessionsAndNotTheOneThatSetIt() async throws {
        try await Self.withService { service, clock in
            let phone = try await service.signUp(email: "dan@example.com", password: Self.password)
            let tablet = try await service.signIn(email: "dan@example.com", password: Self.password, client: "tablet")
            clock.advance(by: 2000)
            let (user, renewed) = try await service.update(idToken: phone.idToken, .init(password: "a new password 1"))
            #expect(renewed != nil)
            let phoneClaims = try await service.issuer.verifyIDToken(phone.idToken, now: user.validSince)
            let tabletClaims = try await service.issuer.verifyIDToken(tablet.idToken, now: user.validSince)
            func refusal(_ claims: Node) async -> AccountGate.Refusal? {
                var session: String?
                if case .string(let jti) = claims.child(ChildKey("jti")) { session = jti }
                return await service.gate.refusal(uid: user.uid, issuedAt: claims.child(ChildKey("iat")).integerValue, session: session)
            }
            // The phone's connections, signed in with its old token, go on until it uses the new
            // one; the tablet's end, and neither old refresh token works.
            #expect(await refusal(phoneClaims) == nil)
            #expect(await refusal(tabletClaims) == .revoked)
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: tablet.refreshToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: phone.refreshToken) }
        }
    }

    @Test func linkingAnEmailAndPasswordUpgradesAnAnonymousAccount() async throws {
        try await Self.withService { service, clock in
            let anonymous = try await service.signUp(email: nil, password: nil)
            // Linked in a later second than the anonymous token's (token times are whole seconds).
            clock.advance(by: 2000)
            let (user, session) = try await service.update(
                idToken: anonymous.idToken, .init(email: "Anon@Example.com", password: Self.password))
            #expect(user.uid == anonymous.user.uid)
            #expect(user.email == "anon@example.com")
            #expect(user.provider == "password")
            #expect(session != nil)
            #expect(try await service.signIn(email: "anon@example.com", password: Self.password, client: "c").user.uid == user.uid)
            // Nothing ended: the linking device's connections, signed in with its anonymous
            // token, stay while it takes the new tokens (which name the password).
            #expect(user.validSince == anonymous.user.validSince)
            let claims = try await service.issuer.verifyIDToken(anonymous.idToken, now: anonymous.user.validSince)
            #expect(await service.gate.refusal(uid: user.uid, issuedAt: claims.child(ChildKey("iat")).integerValue) == nil)
            #expect(try await service.refresh(refreshToken: anonymous.refreshToken).user.uid == user.uid)
            let renewed = try #require(session)
            let renewedClaims = try await service.issuer.verifyIDToken(renewed.idToken, now: anonymous.user.validSince)
            #expect(renewedClaims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("password"))
        }
    }

    @Test func deletingAnAccountEndsEverything() async throws {
        try await Self.withService { service, _ in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            try await service.delete(idToken: session.idToken)
            #expect(try await service.store.user(uid: session.user.uid) == nil)
            await #expect(throws: AuthError.invalidRefreshToken) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.userNotFound) { try await service.user(idToken: session.idToken) }
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            }
            await #expect(throws: AuthError.invalidIDToken) { try await service.delete(idToken: nil) }
            // The email is free again.
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
        }
    }

    // MARK: - Custom tokens

    @Test func aCustomTokenMakesTheAccountOnFirstUse() async throws {
        try await Self.withService { service, clock in
            let claims = Node.object([(ChildKey("premium"), .bool(true))])
            let token = try await service.issuer.customToken(uid: "custom-1", claims: claims, now: clock.now / 1000)
            let first = try await service.signIn(customToken: token)
            #expect(first.isNewUser)
            #expect(first.user.uid == "custom-1")
            #expect(first.user.provider == "custom")
            let idClaims = try await Self.claims(first.idToken, service, clock)
            #expect(idClaims.child(ChildKey("premium")) == .bool(true))
            #expect(idClaims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("custom"))
            let second = try await service.signIn(customToken: token)
            #expect(!second.isNewUser)
            #expect(second.user.uid == "custom-1")
            #expect(try await service.store.count() == 1)
            _ = try await service.refresh(refreshToken: first.refreshToken)
        }
    }

    @Test func unsignedCustomTokensAreAcceptedOnlyInEmulatorMode() async throws {
        let unsigned = [#"{"alg":"none","typ":"JWT"}"#, #"{"aud":"\#(TokenIssuer.customTokenAudience)","uid":"emu-1"}"#]
            .map {
                Data($0.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            .joined(separator: ".") + "."
        try await Self.withService { (service: AuthService, _: TestClock) async throws in
            await #expect(throws: AuthError.invalidCustomToken) { try await service.signIn(customToken: unsigned) }
            #expect(try await service.store.count() == 0)
        }
        var policy = AuthService.Policy()
        policy.emulator = true
        try await Self.withService(policy: policy) { service, _ in
            let session = try await service.signIn(customToken: unsigned)
            #expect(session.user.uid == "emu-1")
            #expect(session.isNewUser)
        }
    }

    @Test
    func customTokenClaimsAreNotStoredOnTheAccount() async throws {
        try await Self.withService { service, clock in
            let claims = Node.object([(ChildKey("premium"), .bool(true))])
            let token = try await service.issuer.customToken(uid: "custom-1", claims: claims, now: clock.now / 1000)
            let session = try await service.signIn(customToken: token)
            #expect(try await service.store.user(uid: "custom-1")?.customClaims == .null)
            // The claims belong to that session: its ID tokens carry them, refreshed ones too.
            #expect(try await Self.claims(session.idToken, service, clock).child(ChildKey("premium")) == .bool(true))
            clock.advance(by: 60_000)
            let refreshed = try await service.refresh(refreshToken: session.refreshToken)
            let refreshedClaims = try await Self.claims(refreshed.idToken, service, clock)
            #expect(refreshedClaims.child(ChildKey("premium")) == .bool(true))
            #expect(refreshedClaims.child(ChildKey("firebase")).child(ChildKey("sign_in_provider")) == .string("custom"))
            let plain = try await service.signIn(customToken: try await service.issuer.customToken(uid: "custom-1", now: clock.now / 1000))
            #expect(try await Self.claims(plain.idToken, service, clock).child(ChildKey("premium")).isNull)
        }
    }

    @Test func anAdminPasswordChangeEndsTheOldSessions() async throws {
        try await Self.withService { service, clock in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 2000)
            var fields = AuthService.AccountFields()
            fields.password = "another password"
            _ = try await service.updateUser(uid: session.user.uid, fields)
            await #expect(throws: AuthError.tokenExpired) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.tokenExpired) { try await service.user(idToken: session.idToken) }
            let again = try await service.signIn(email: "alice@example.com", password: "another password", client: "c")
            #expect(try await service.user(idToken: again.idToken).uid == session.user.uid)
        }
    }

    @Test func aDisabledCustomAccountCannotSignIn() async throws {
        try await Self.withService { service, clock in
            var fields = AuthService.AccountFields()
            fields.uid = "custom-2"
            fields.disabled = true
            _ = try await service.createUser(fields)
            let token = try await service.issuer.customToken(uid: "custom-2", now: clock.now / 1000)
            await #expect(throws: AuthError.userDisabled) { try await service.signIn(customToken: token) }
        }
    }

    // MARK: - Admin

    @Test func adminsCreateAndUpdateAccounts() async throws {
        try await Self.withService { service, clock in
            var fields = AuthService.AccountFields()
            fields.uid = "bob-uid"
            fields.email = "Bob@Example.com"
            fields.password = Self.password
            fields.displayName = "Bob"
            fields.emailVerified = true
            fields.customClaims = .object([(ChildKey("role"), .string("editor"))])
            let bob = try await service.createUser(fields)
            #expect(bob.uid == "bob-uid")
            #expect(bob.email == "bob@example.com")
            #expect(bob.provider == "password")
            #expect(try await service.store.user(uid: "bob-uid") == bob)
            let session = try await service.signIn(email: "bob@example.com", password: Self.password, client: "c")
            let claims = try await Self.claims(session.idToken, service, clock)
            #expect(claims.child(ChildKey("role")) == .string("editor"))
            #expect(claims.child(ChildKey("email_verified")) == .bool(true))

            await #expect(throws: AuthError.duplicateLocalID) { try await service.createUser(fields) }
            var sameEmail = AuthService.AccountFields()
            sameEmail.email = "bob@example.com"
            await #expect(throws: AuthError.emailExists) { try await service.createUser(sameEmail) }
            // Neither email nor password: an account for custom-token sign-in.
            var bare = AuthService.AccountFields()
            bare.uid = "bare"
            #expect(try await service.createUser(bare).provider == "custom")

            var update = AuthService.AccountFields()
            update.customClaims = .object([(ChildKey("role"), .string("admin")), (ChildKey("level"), .int(2))])
            update.displayName = "Robert"
            let updated = try await service.updateUser(uid: "bob-uid", update)
            #expect(updated.displayName == "Robert")
            #expect(try await service.store.user(uid: "bob-uid")?.customClaims.child(ChildKey("role")) == .string("admin"))
            let refreshed = try await service.refresh(refreshToken: session.refreshToken)
            #expect(try await Self.claims(refreshed.idToken, service, clock).child(ChildKey("level")) == .int(2))

            var reserved = AuthService.AccountFields()
            reserved.customClaims = .object([(ChildKey("sub"), .string("mallory"))])
            let refused = await #expect(throws: AuthError.self) { try await service.updateUser(uid: "bob-uid", reserved) }
            #expect(refused?.code == "INVALID_CLAIMS")
            var notObject = AuthService.AccountFields()
            notObject.customClaims = .string("admin")
            let invalid = await #expect(throws: AuthError.self) { try await service.updateUser(uid: "bob-uid", notObject) }
            #expect(invalid?.code == "INVALID_ARGUMENT")
            #expect(try await service.store.user(uid: "bob-uid")?.customClaims.child(ChildKey("role")) == .string("admin"))
            var clear = AuthService.AccountFields()
            clear.customClaims = .null
            _ = try await service.updateUser(uid: "bob-uid", clear)
            #expect(try await service.store.user(uid: "bob-uid")?.customClaims == .null)
            await #expect(throws: AuthError.userNotFound) { try await service.updateUser(uid: "nobody", update) }
        }
    }

    @Test func adminsDeleteAccounts() async throws {
        try await Self.withService { service, _ in
            let session = try await service.signUp(email: "alice@example.com", password: Self.password)
            try await service.deleteUser(uid: session.user.uid)
            #expect(try await service.store.user(uid: session.user.uid) == nil)
            await #expect(throws: AuthError.invalidRefreshToken) { try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.userNotFound) { try await service.deleteUser(uid: session.user.uid) }
        }
    }

    @Test func adminsListAccountsPageByPage() async throws {
        try await Self.withService { service, _ in
            for uid in ["u05", "u01", "u04", "u02", "u03"] {
                var fields = AuthService.AccountFields()
                fields.uid = uid
                _ = try await service.createUser(fields)
            }
            let first = try await service.listUsers(pageToken: nil, maxResults: 2)
            #expect(first.users.map(\.uid) == ["u01", "u02"])
            #expect(first.next == "u02")
            let second = try await service.listUsers(pageToken: first.next, maxResults: 2)
            #expect(second.users.map(\.uid) == ["u03", "u04"])
            #expect(second.next == "u04")
            let last = try await service.listUsers(pageToken: second.next, maxResults: 2)
            #expect(last.users.map(\.uid) == ["u05"])
            #expect(last.next == nil)
            // A page that ends exactly at the last account has no next page either.
            let exact = try await service.listUsers(pageToken: "u03", maxResults: 2)
            #expect(exact.users.map(\.uid) == ["u04", "u05"])
            #expect(exact.next == nil)
            let all = try await service.listUsers(pageToken: nil, maxResults: 1000)
            #expect(all.users.count == 5)
            #expect(all.next == nil)
            for bad in [0, 1001] {
                let refused = await #expect(throws: AuthError.self) { try await service.listUsers(pageToken: nil, maxResults: bad) }
                #expect(refused?.code == "INVALID_ARGUMENT")
            }
        }
    }

    @Test func adminsFindAccountsByUIDAndEmail() async throws {
        try await Self.withService { service, _ in
            let alice = try await service.signUp(email: "alice@example.com", password: Self.password).user
            let bob = try await service.signUp(email: "bob@example.com", password: Self.password).user
            _ = try await service.signUp(email: "carol@example.com", password: Self.password)
            var identifiers = AuthService.Identifiers()
            identifiers.uids = [alice.uid, "nobody"]
            identifiers.emails = ["BOB@example.com", "alice@example.com", "x@y.z"]
            let found = try await service.users(matching: identifiers)
            // Each account once, in the order first named.
            #expect(found.map(\.uid) == [alice.uid, bob.uid])
            #expect(try await service.users(matching: AuthService.Identifiers()).isEmpty)
        }
    }

    // MARK: - Logs

    @Test func noPasswordOrTokenIsEverLogged() async throws {
        let recorder = LogRecorder()
        let logger = Logger(label: "hearth-auth-test") { _ in RecordingLogHandler(recorder: recorder) }
        var secrets: [String] = []
        try await Self.withService(logger: logger) { service, clock in
            let signedUp = try await service.signUp(email: "alice@example.com", password: Self.password)
            secrets += [signedUp.idToken, signedUp.refreshToken]
            let signedIn = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            secrets += [signedIn.idToken, signedIn.refreshToken]
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "wrong horse", client: "c")
            }
            let refreshed = try await service.refresh(refreshToken: signedIn.refreshToken)
            secrets.append(refreshed.idToken)
            let custom = try await service.issuer.customToken(uid: "custom-1", now: clock.now / 1000)
            let customSession = try await service.signIn(customToken: custom)
            secrets += [custom, customSession.idToken, customSession.refreshToken]
            let (_, changed) = try await service.update(idToken: signedIn.idToken, .init(password: "new password"))
            secrets += [changed?.idToken, changed?.refreshToken].compactMap { $0 }
            var fields = AuthService.AccountFields()
            fields.uid = "admin-made"
            fields.password = "admin password"
            _ = try await service.createUser(fields)
            try await service.delete(idToken: customSession.idToken)
            if let hash = try await service.store.user(uid: signedUp.user.uid)?.passwordHash { secrets.append(hash) }
        }
        let lines = recorder.lines
        // The service does log (so the check below looks at something).
        #expect(lines.contains { $0.contains("account created") })
        #expect(secrets.count >= 10)
        for secret in [Self.password, "wrong horse", "new password", "admin password"] + secrets {
            // A prefix is enough to recognise a token without printing a whole one on failure.
            #expect(!lines.contains { $0.contains(secret) }, "logged: \(secret.prefix(12))…")
        }
    }
}

/// Every log line a ``RecordingLogHandler`` saw: level, message, metadata and error.
final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])

    var lines: [String] { storage.withLock { $0 } }

    func append(_ line: String) { storage.withLock { $0.append(line) } }
}

/// A log handler that keeps everything it is given, at every level.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        recorder.append("\(event.level) \(event.message) \(merged) \(event.error.map { "\($0)" } ?? "") \(event.source)")
    }
}
