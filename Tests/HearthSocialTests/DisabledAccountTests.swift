import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

/// Disabling means disabled: an account disabled by an admin (the console, the Admin API) while
/// the person has the app open loses its open session at once: the realtime connection is
/// signed out (`ac`), the app's client signs out and says why, their ID token is refused by the
/// database and storage, and nothing they write gets through. Enabled again, they sign in as
/// before. The same for an account signed out everywhere (revoked) and one deleted.
@Suite("A disabled account's sessions") @MainActor
struct DisabledAccountTests {
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    static func adminUpdate(_ harness: SocialHarness, _ fields: String) async throws {
        let result = try await harness.server.request(
            "POST", "/identitytoolkit.googleapis.com/v1/accounts:update", body: fields, headers: admin)
        #expect(result.status == 200, "\(String(decoding: result.body, as: UTF8.self))")
    }

    @Test(.timeLimit(.minutes(10))) func aDisabledPersonsOpenSessionEndsAtOnce() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann Disabled")
            let uid = try #require(ann.auth.currentUser?.uid)
            let token = try #require(try await ann.auth.idToken())
            let bio = ann.database.root.child("people/\(uid)/bio")
            try await bio.setValue("Before")
            #expect(try await harness.server.request("GET", "/people/\(uid)/bio.json?auth=\(token)").status == 200)

            try await Self.adminUpdate(harness, #"{"localId": "\#(uid)", "disableUser": true}"#)
            // Her open app is signed out without doing anything, and knows why.
            await eventually("Ann's app to be signed out", seconds: 20) { ann.auth.currentUser == nil }
            #expect(ann.auth.sessionEndedBy == "USER_DISABLED")
            // Her token, still unexpired and well signed, is refused with the reason.
            let refused = try await harness.server.request("GET", "/people/\(uid)/bio.json?auth=\(token)")
            #expect(refused.status == 401)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("The account is disabled."))
            let write = try await harness.server.request("PUT", "/people/\(uid)/bio.json?auth=\(token)", body: #""After""#)
            #expect(write.status == 401)
            let stored = try await harness.server.request("GET", "/people/\(uid)/bio.json", headers: Self.admin)
            #expect(String(decoding: stored.body, as: UTF8.self) == #""Before""#)

            // Enabled again: she signs in as before, and writes.
            try await Self.adminUpdate(harness, #"{"localId": "\#(uid)", "disableUser": false}"#)
            let session = SessionViewModel(client: ann)
            session.email = "ann.disabled@example.com"
            session.password = "secret-Ann Disabled"
            await session.signIn()
            #expect(session.errorMessage == nil)
            #expect(ann.auth.sessionEndedBy == nil)
            let again = try #require(try await ann.auth.idToken())
            #expect(try await harness.server.request("PUT", "/people/\(uid)/bio.json?auth=\(again)", body: #""Back""#).status == 200)
        }
    }

    @Test(.timeLimit(.minutes(10))) func tokensFromBeforeARevocationOrADeletionAreRefused() async throws {
        try await SocialHarness.with { harness in
            let bob = try await harness.user("Bob Revoked")
            let bobID = try #require(bob.auth.currentUser?.uid)
            let old = try #require(try await bob.auth.idToken())
            // Token times are whole seconds: a revocation in the same second leaves it valid.
            try await Task.sleep(for: .milliseconds(1100))
            try await Self.adminUpdate(harness, #"{"localId": "\#(bobID)", "validSince": "\#(Int(Date().timeIntervalSince1970))"}"#)
            let revoked = try await harness.server.request("GET", "/people/\(bobID).json?auth=\(old)")
            #expect(revoked.status == 401 && String(decoding: revoked.body, as: UTF8.self).contains("The sign-in was ended."))

            let cy = try await harness.user("Cy Deleted")
            let cyID = try #require(cy.auth.currentUser?.uid)
            let cyToken = try #require(try await cy.auth.idToken())
            let deleted = try await harness.server.request(
                "POST", "/identitytoolkit.googleapis.com/v1/accounts:delete", body: #"{"localId": "\#(cyID)"}"#, headers: Self.admin)
            #expect(deleted.status == 200)
            let gone = try await harness.server.request("GET", "/people/\(cyID).json?auth=\(cyToken)")
            #expect(gone.status == 401 && String(decoding: gone.body, as: UTF8.self).contains("The account was deleted."))
            await eventually("Cy's app to be signed out", seconds: 20) { cy.auth.currentUser == nil }
        }
    }
}
