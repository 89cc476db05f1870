import Foundation
import HearthClient
import HearthServer
import HearthTesting
import Testing

/// The SDK's accounts against a real server, and the database judging requests by them.
@Suite("HearthClient auth")
struct AuthClientTests {
    static let friendlyPix = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules/friendlypix-web-database-rules.json").standardized,
        encoding: .utf8)

    @Test func signUpSignInAndSignOut() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            let auth = Auth(url: server.baseURL)
            var states = auth.stateChanges().makeAsyncIterator()
            #expect(await states.next() == .some(nil))
            let user = try await auth.createUser(email: "ann@example.com", password: "secret-pw")
            #expect(user.email == "ann@example.com")
            #expect(!user.isAnonymous)
            #expect(auth.currentUser?.uid == user.uid)
            #expect(await states.next()??.uid == user.uid)
            #expect(try await auth.idToken() != nil)

            await auth.signOut()
            #expect(auth.currentUser == nil)
            #expect(await states.next() == .some(nil))
            #expect(try await auth.idToken() == nil)

            let again = try await auth.signIn(email: "ann@example.com", password: "secret-pw")
            #expect(again.uid == user.uid)
            let wrong = await #expect(throws: HearthClientError.self) {
                try await auth.signIn(email: "ann@example.com", password: "not it")
            }
            #expect(wrong?.message == "INVALID_LOGIN_CREDENTIALS")
            let taken = await #expect(throws: HearthClientError.self) {
                try await auth.createUser(email: "ann@example.com", password: "another-pw")
            }
            #expect(taken?.message == "EMAIL_EXISTS")
            // A failed sign-in leaves the signed-in user as they were.
            #expect(auth.currentUser?.uid == user.uid)
        }
    }

    @Test func anonymousUsersAndProfiles() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            let auth = Auth(url: server.baseURL)
            let guest = try await auth.signInAnonymously()
            #expect(guest.isAnonymous)
            #expect(guest.email == nil)
            let named = try await auth.updateProfile(displayName: "Guest Star", photoURL: "https://example.com/g.png")
            #expect(named.displayName == "Guest Star")
            #expect(auth.currentUser?.photoURL == "https://example.com/g.png")
            try await auth.deleteAccount()
            #expect(auth.currentUser == nil)
        }
    }

    @Test func theDatabaseJudgesRequestsByTheSignedInUser() async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.friendlyPix }) { (server: TestServer) async throws in
            let auth = Auth(url: server.baseURL)
            let database = Database(url: server.baseURL, auth: auth)
            // Connected first: like Firebase's SDKs, a read waits only 3 s for a connection before
            // it answers from the (here empty) cache, and a busy test machine can take longer.
            for await status in database.observeSyncStatus() where status.isConnected { break }
            // Signed out: FriendlyPix lets anyone read posts but nobody write as nobody.
            #expect(try await database.root.child("posts").getData().exists == false)
            await #expect(throws: HearthClientError.self) { try await database.root.child("people/x/full_name").setValue("X").acknowledged() }

            let user = try await auth.createUser(email: "ann@example.com", password: "secret-pw")
            try await auth.updateProfile(displayName: "Ann")
            struct Author: Codable { var uid: String; var full_name: String }
            struct Post: Codable { var author: Author; var text: String; var timestamp: ServerTimestamp; var client: String }
            let post = database.root.child("posts").childByAutoId()
            // The token now carries the name, which FriendlyPix's rules compare with full_name;
            // the timestamp must be the server's.
            try await post.setValue(Post(author: Author(uid: user.uid, full_name: "Ann"), text: "hi", timestamp: .server, client: "ios")).acknowledged()
            let stored = try await post.getData().value(as: Post.self)
            #expect(stored.timestamp.milliseconds != nil)
            // Someone else's name is refused, in the server's words.
            let forged = await #expect(throws: HearthClientError.self) {
                try await database.root.child("posts").childByAutoId().setValue(
                    Post(author: Author(uid: user.uid, full_name: "Bob"), text: "hi", timestamp: .server, client: "ios")).acknowledged()
            }
            #expect(forged?.kind == .permissionDenied)
            #expect(forged?.message == "Permission denied")
        }
    }
}
