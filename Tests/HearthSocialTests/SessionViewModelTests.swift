import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

@Suite("Session") @MainActor
struct SessionViewModelTests {
    @Test func signingUpMakesAnAccountAndAPublicProfile() async throws {
        try await SocialHarness.with { harness in
            // Given a new visitor
            let session = SessionViewModel(client: harness.client())
            #expect(!session.isSignedIn)
            // When they sign up with a name
            session.email = "ann.lee@example.com"
            session.password = "secret-pw"
            session.displayName = "Ann Lee"
            await session.signUp()
            // Then they are signed in and their profile is searchable by first and last name
            #expect(session.errorMessage == nil)
            let uid = try #require(session.user?.uid)
            #expect(session.user?.displayName == "Ann Lee")
            let profile = try await harness.profile(uid)
            #expect(profile.fullName == "Ann Lee")
            #expect(profile.searchIndex?.fullName == "ann lee")
            #expect(profile.searchIndex?.reversedFullName == "lee ann")
        }
    }

    @Test func mistakesAreExplainedInWords() async throws {
        try await SocialHarness.with { harness in
            _ = try await harness.user("Ann")
            let session = SessionViewModel(client: harness.client())
            session.email = "ann@example.com"
            session.password = "wrong password"
            await session.signIn()
            #expect(session.errorMessage == "Wrong email address or password.")
            #expect(!session.isSignedIn)

            session.displayName = "Another Ann"
            session.password = "secret-pw"
            await session.signUp()
            #expect(session.errorMessage == "That email address already has an account.")

            session.email = "new@example.com"
            session.password = "123"
            await session.signUp()
            #expect(session.errorMessage == "The password must be at least 6 characters.")

            session.displayName = "  "
            await session.signUp()
            #expect(session.errorMessage == "Enter your name.")
        }
    }

    @Test func browsingAnonymouslyAndSigningOut() async throws {
        try await SocialHarness.with { harness in
            let session = SessionViewModel(client: harness.client())
            await session.browseAnonymously()
            #expect(session.errorMessage == nil)
            #expect(session.isAnonymous)
            let uid = try #require(session.user?.uid)
            let profile = try await harness.profile(uid)
            #expect(profile.fullName == "Anonymous")
            #expect(profile.searchIndex == nil)
            await session.signOut()
            #expect(!session.isSignedIn)
        }
    }

    @Test func anAnonymousVisitorKeepsTheirUIDWhenSigningUp() async throws {
        try await SocialHarness.with { harness in
            let client = harness.client()
            let session = SessionViewModel(client: client)
            await session.browseAnonymously()
            let uid = try #require(session.user?.uid)
            session.displayName = "Kim Kept"
            session.email = "kim.kept@example.com"
            session.password = "kept-password"
            await session.signUp()
            #expect(session.errorMessage == nil)
            #expect(session.user?.uid == uid)
            #expect(session.isAnonymous == false)
            #expect(session.user?.email == "kim.kept@example.com")
            // Named in the same request as the link: the new ID token carries the name.
            #expect(session.user?.displayName == "Kim Kept")
            #expect(try Self.payload(of: try #require(try await client.auth.idToken()))["name"] as? String == "Kim Kept")
            let profile = try await harness.profile(uid) { $0.fullName == "Kim Kept" }
            #expect(profile.fullName == "Kim Kept")
            #expect(profile.searchIndex != nil)
            // The password signs in to that same account, from another device.
            let other = SessionViewModel(client: harness.client())
            other.email = "kim.kept@example.com"
            other.password = "kept-password"
            await other.signIn()
            #expect(other.user?.uid == uid)
        }
    }

    @Test func forgotPasswordEmailsACodeThatSetsANewOne() async throws {
        try await SocialHarness.with { harness in
            _ = try await harness.user("Rita Reset")
            let session = SessionViewModel(client: harness.client())
            session.email = "rita.reset@example.com"
            await session.sendPasswordReset()
            #expect(session.errorMessage == nil)
            #expect(session.resetEmailSent)
            // The test server runs in emulator mode, which lists the codes it would email.
            let listed = try await harness.server.request("GET", "/emulator/v1/projects/hearth/oobCodes")
            let codes = try #require(JSONSerialization.jsonObject(with: listed.body) as? [String: Any])["oobCodes"] as? [[String: Any]]
            let code = try #require(codes?.last { $0["email"] as? String == "rita.reset@example.com" }?["oobCode"] as? String)
            let auth = harness.client().auth
            #expect(try await auth.verifyPasswordResetCode(code) == "rita.reset@example.com")
            try await auth.confirmPasswordReset(code: code, newPassword: "brand-new-password")
            session.password = "secret-Rita Reset"
            await session.signIn()
            #expect(session.errorMessage == "Wrong email address or password.")
            session.password = "brand-new-password"
            await session.signIn()
            #expect(session.errorMessage == nil && session.user?.email == "rita.reset@example.com")
            // The code worked once.
            await #expect(throws: (any Error).self) { try await auth.confirmPasswordReset(code: code, newPassword: "another-one") }
        }
    }

    @Test func editingTheProfileChangesTheNameEverywhere() async throws {
        try await SocialHarness.with { harness in
            let client = try await harness.user("Ann")
            let session = SessionViewModel(client: client)
            await session.updateProfile(name: "Ann Marie", pictureURL: "https://example.com/ann.png")
            #expect(session.errorMessage == nil)
            #expect(session.user?.displayName == "Ann Marie")
            let uid = try #require(session.user?.uid)
            let profile = try await harness.profile(uid) { $0.fullName == "Ann Marie" }
            #expect(profile.fullName == "Ann Marie")
            #expect(profile.profilePicture == "https://example.com/ann.png")
            // The rules accept only the token's own name: another one is refused.
            let forged = await #expect(throws: HearthClientError.self) {
                try await client.database.root.child("people/\(uid)/full_name").setValue("Queen Ann").acknowledged()
            }
            #expect(forged?.kind == .permissionDenied)
        }
    }

    @Test func aBioIsSavedDecodedAndRefusedWhenTooLong() async throws {
        try await SocialHarness.with { harness in
            let client = try await harness.user("Bea")
            let session = SessionViewModel(client: client)
            await session.updateProfile(bio: "I bake bread. #sourdough")
            #expect(session.errorMessage == nil)
            let uid = try #require(session.user?.uid)
            var profile = try await harness.profile(uid) { $0.bio == "I bake bread. #sourdough" }
            #expect(profile.bio == "I bake bread. #sourdough")
            #expect(profile.fullName == "Bea")

            // Too long: said in words, and nothing changes (the rules refuse it written by hand too).
            await session.updateProfile(bio: String(repeating: "b", count: 301))
            #expect(session.errorMessage == "The bio is longer than 300 characters.")
            let refused = await #expect(throws: HearthClientError.self) {
                try await client.database.root.child("people/\(uid)/bio").setValue(String(repeating: "b", count: 301)).acknowledged()
            }
            #expect(refused?.kind == .permissionDenied)
            profile = try await harness.admin.root.child("people/\(uid)").getData().value(as: Profile.self)
            #expect(profile.bio == "I bake bread. #sourdough")

            // An empty bio removes it.
            await session.updateProfile(bio: "")
            profile = try await harness.profile(uid) { $0.bio == nil }
            #expect(profile.bio == nil)
        }
    }

    /// A JWT's payload, read without checking its signature (the server made it; the test reads
    /// what it says).
    static func payload(of token: String) throws -> [String: Any] {
        var encoded = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        encoded += String(repeating: "=", count: (4 - encoded.count % 4) % 4)
        let data = try #require(Data(base64Encoded: encoded))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
