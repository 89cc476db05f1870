import Foundation
import HearthCore
import HearthTesting
import Testing
@testable import HearthAuth

/// Every change of how an account is signed in to (unlinking a method, linking a provider,
/// setting a password, changing the email or password) needs a recent sign-in, as Firebase's
/// sensitive operations do: an old ID token (one taken from a page) gets
/// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` and changes nothing. The window is
/// ``AuthService/Policy/recentSignInSeconds`` (five minutes), the one that already guarded
/// password and email changes and deletion.
@Suite struct SignInMethodChangeTests {
    static let password = AuthServiceTests.password
    /// The token: signed in 29 minutes ago, and still unexpired.
    static let staleness: Int64 = 29 * 60 * 1000

    @Test func unlinkingThePasswordWithAStaleTokenIsRefused() async throws {
        try await AuthServiceTests.withService { service, clock in
            let signedUp = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: Self.staleness)
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.update(idToken: signedUp.idToken, .init(deleteProviders: ["password"]))
            }
            // Refreshing keeps the old sign-in time: a stolen session is no better.
            let refreshed = try await service.refresh(refreshToken: signedUp.refreshToken)
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.update(idToken: refreshed.idToken, .init(deleteProviders: ["password"]))
            }
            // The owner is not locked out…
            let stored = try #require(try await service.store.user(uid: signedUp.user.uid))
            #expect(stored.passwordHash != nil)
            let again = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            // …and, signed in again, may unlink it.
            let (unlinked, _) = try await service.update(idToken: again.idToken, .init(deleteProviders: ["password"]))
            #expect(unlinked.passwordHash == nil)
        }
    }

    @Test func theWindowIsTheOneForPasswordChanges() async throws {
        try await AuthServiceTests.withService { service, clock in
            let signedUp = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: 300_000)
            _ = try await service.update(idToken: signedUp.idToken, .init(displayName: "still recent"))
            let (kept, _) = try await service.update(idToken: signedUp.idToken, .init(deleteProviders: ["phone"]))
            #expect(kept.uid == signedUp.user.uid)
            clock.advance(by: 1000)
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.update(idToken: signedUp.idToken, .init(deleteProviders: ["phone"]))
            }
            // Everyday changes still work with it.
            let (renamed, _) = try await service.update(idToken: signedUp.idToken, .init(displayName: "Alice"))
            #expect(renamed.displayName == "Alice")
        }
    }

    @Test func unlinkingAProviderOrPhoneWithAStaleTokenIsRefused() async throws {
        let github = FakeGitHub()
        try await AuthServiceTests.withService(http: github) { service, clock in
            try await FakeGitHub.install(on: service)
            let signedIn = try #require(try await service.finishSignIn(FakeGitHub.credential).session)
            var fields = AuthService.AccountFields()
            fields.phoneNumber = "+15555550100"
            _ = try await service.updateUser(uid: signedIn.user.uid, fields)
            clock.advance(by: Self.staleness)
            for provider in ["github.com", "phone"] {
                await #expect(throws: AuthError.credentialTooOld, "\(provider)") {
                    try await service.update(idToken: signedIn.idToken, .init(deleteProviders: [provider]))
                }
            }
            let stored = try #require(try await service.store.user(uid: signedIn.user.uid))
            #expect(stored.identities.map(\.providerID) == ["github.com"])
            #expect(stored.phoneNumber == "+15555550100")
        }
    }

    @Test func settingAPasswordOrEmailOnAProviderAccountWithAStaleTokenIsRefused() async throws {
        let github = FakeGitHub()
        try await AuthServiceTests.withService(http: github) { service, clock in
            try await FakeGitHub.install(on: service)
            let signedIn = try #require(try await service.finishSignIn(FakeGitHub.credential).session)
            clock.advance(by: Self.staleness)
            for change in [
                AuthService.ProfileChange(password: "a new password"), .init(email: "mallory@example.com"),
                .init(email: "mallory@example.com", password: "a new password"),
            ] {
                await #expect(throws: AuthError.credentialTooOld) { try await service.update(idToken: signedIn.idToken, change) }
            }
            let stored = try #require(try await service.store.user(uid: signedIn.user.uid))
            #expect(stored.passwordHash == nil && stored.email == nil)
        }
    }

    @Test func linkingAProviderWithAStaleTokenIsRefusedBeforeTheProviderIsAsked() async throws {
        let github = FakeGitHub()
        try await AuthServiceTests.withService(http: github) { service, clock in
            try await FakeGitHub.install(on: service)
            let alice = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: Self.staleness)
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.finishSignIn(FakeGitHub.credential, linkingTo: alice.idToken)
            }
            #expect(github.asked.isEmpty)
            #expect(try await service.store.user(uid: alice.user.uid)?.identities.isEmpty == true)
            // Signed in again, the same link works.
            let again = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
            let linked = try await service.finishSignIn(FakeGitHub.credential, linkingTo: again.idToken)
            #expect(linked.session?.user.uid == alice.user.uid)
            #expect(try await service.store.user(uid: alice.user.uid)?.identities.map(\.providerID) == ["github.com"])
        }
    }

    @Test func linkingAnEmailLinkWithAStaleTokenIsRefused() async throws {
        try await AuthServiceTests.withService { service, clock in
            let alice = try await service.signUp(email: "alice@example.com", password: Self.password)
            clock.advance(by: Self.staleness)
            // Refused on the token, before the code is looked at.
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.signIn(emailLinkCode: "any-code", email: "alice@example.com", idToken: alice.idToken)
            }
        }
    }

    @Test func anAnonymousAccountMayGainAWayInAtAnyTime() async throws {
        let github = FakeGitHub()
        try await AuthServiceTests.withService(http: github) { service, clock in
            try await FakeGitHub.install(on: service)
            let anonymous = try await service.signUp(email: nil, password: nil)
            clock.advance(by: Self.staleness)
            // Nothing to remove is no change of how it is signed in to.
            _ = try await service.update(idToken: anonymous.idToken, .init(deleteProviders: ["password"]))
            let linked = try await service.finishSignIn(FakeGitHub.credential, linkingTo: anonymous.idToken)
            #expect(linked.session?.user.uid == anonymous.user.uid)
            // Now it has one: removing it needs a recent sign-in like any other account's.
            let session = try #require(linked.session)
            clock.advance(by: Self.staleness)
            await #expect(throws: AuthError.credentialTooOld) {
                try await service.update(idToken: session.idToken, .init(deleteProviders: ["github.com"]))
            }
        }
    }
}
