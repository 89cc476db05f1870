import Foundation
import HearthClient
import HearthSocial
import HearthSocialServer
import HearthTesting
import Synchronization
import Testing

/// The server side's scheduled jobs: a deleted account's clean-up runs again until its last ID
/// token has expired, and, when the operator set one, posts past the retention period go.
@Suite("Scheduled clean-ups") @MainActor
struct RetentionTests {
    @Test(.timeLimit(.minutes(10))) func aDeletedAccountsDataWrittenAgainGoesUntilItsTokensExpire() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let ledger = DeletedAccountsLedger(url: folder.url.appendingPathComponent("social/deleted-accounts.json"))
        let later = Mutex<Int64>(0)
        try await SocialHarness.withServerSide(ledger: ledger, now: { Int64(Date().timeIntervalSince1970 * 1000) + later.withLock { $0 } }) { harness in
            let ann = try await harness.user("Ann Lee")
            let annID = try #require(ann.auth.currentUser?.uid)
            let deletion = AccountDeletionViewModel(client: ann)
            deletion.confirmation = "DELETE"
            deletion.password = "secret-Ann Lee"
            await deletion.delete()
            #expect(deletion.isDeleted)
            let cleanup = try harness.cleanup()
            let deadline = Date().addingTimeInterval(30)
            while try await !cleanup.traces(of: annID).isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await cleanup.traces(of: annID) == [])
            #expect(try ledger.entries().map(\.uid) == [annID])

            // A device still signed in as her writes again (her ID token is valid for up to an hour).
            try await harness.admin.root.child("people/\(annID)").setValue(["full_name": "Ann Lee"] as DatabaseValue).acknowledged()
            try await harness.runScheduled("sweepDeletedAccounts")
            #expect(try await cleanup.traces(of: annID) == [])
            // Still noted: her tokens may not have expired yet.
            #expect(try ledger.entries().map(\.uid) == [annID])

            // Once they have, the sweep runs a last time and forgets her.
            later.withLock { $0 = SocialFunctions.tokenLifetime + 60_000 }
            try await harness.runScheduled("sweepDeletedAccounts")
            #expect(try ledger.entries().isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(10))) func postsPastTheRetentionPeriodGoWithEverythingPointingAtThem() async throws {
        try await SocialHarness.withServerSide(retention: .init(postDays: 30)) { harness in
            let (bob, carol) = (try await harness.user("Bob Martin"), try await harness.user("Carol Diaz"))
            let bobID = try #require(bob.auth.currentUser?.uid)
            @MainActor func publish(_ title: String) async throws -> String {
                let compose = ComposeViewModel(client: bob)
                compose.title = title
                compose.body = "\(title) #retention"
                compose.addPhoto(ComposeViewModel.PhotoDraft(full: jpeg(2000), thumbnail: jpeg(300)))
                return try #require(await compose.post()).id
            }
            let (old, recent) = (try await publish("Old times"), try await publish("Fresh"))
            for post in [old, recent] {
                let detail = PostDetailViewModel(client: carol, postID: post)
                detail.newComment = "Lovely"
                await detail.addComment()
                await detail.toggleLike()
                await detail.toggleSaved()
                #expect(detail.errorMessage == nil)
            }
            // The first was published 31 days ago.
            let stamp = Int64(Date().timeIntervalSince1970 * 1000) - 31 * 86_400_000
            try await harness.admin.root.updateChildValues([
                "posts/\(old)/timestamp": DatabaseValue(Int(stamp)), "user-posts/\(bobID)/\(old)/timestamp": DatabaseValue(Int(stamp)),
            ]).acknowledged()
            let photo = try #require(try? await harness.admin.root.child("posts/\(old)/photos/0/full").getData().value(as: String.self))

            try await harness.runScheduled("deleteOldPosts")
            let cleanup = try harness.cleanup()
            #expect(try await cleanup.traces(of: old) == [])
            await #expect(throws: (any Error).self) { _ = try await bob.storage.reference(photo).getMetadata() }
            // The recent one, its comment, like and save stay.
            #expect(try await harness.admin.root.child("posts/\(recent)/starCount").getData().value(as: Int.self) == 1)
            #expect(try await harness.admin.root.child("comments/\(recent)").getData().childrenCount == 1)
            #expect(try await !cleanup.traces(of: recent).isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(10))) func accountsUnusedPastTheRetentionPeriodAreDeletedWithTheirData() async throws {
        let clock = Mutex<Int64?>(nil)
        let now: @Sendable () -> Int64 = { clock.withLock { $0 } ?? Int64(Date().timeIntervalSince1970 * 1000) }
        try await SocialHarness.withServerSide(retention: .init(inactiveAccountDays: 30), now: now) { harness in
            let (ann, bob) = (try await harness.user("Ann Lee"), try await harness.user("Bob Martin"))
            let (annID, bobID) = (try #require(ann.auth.currentUser?.uid), try #require(bob.auth.currentUser?.uid))
            let compose = ComposeViewModel(client: bob)
            compose.title = "Left behind"
            compose.body = "Nobody comes here"
            let post = try #require(await compose.post()).id
            // Bob was last here before `quiet`; Ann's session refreshed after it.
            let quiet = Int64(Date().timeIntervalSince1970 * 1000) + 5
            while Int64(Date().timeIntervalSince1970 * 1000) <= quiet + 5 { await Task.yield() }
            _ = try await ann.auth.idToken(forceRefresh: true)
            clock.withLock { $0 = quiet + 30 * 86_400_000 }

            try await harness.runScheduled("deleteInactiveAccounts")
            let cleanup = try harness.cleanup()
            let deadline = Date().addingTimeInterval(30)
            while try await !cleanup.traces(of: bobID).isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await cleanup.traces(of: bobID) == [])
            #expect(try await cleanup.traces(of: post) == [])
            #expect(try await harness.admin.root.child("people/\(annID)/full_name").getData().value(as: String.self) == "Ann Lee")
            let signIn = SessionViewModel(client: harness.client())
            signIn.email = "bob.martin@example.com"
            signIn.password = "secret-Bob Martin"
            await signIn.signIn()
            #expect(signIn.errorMessage == "Wrong email address or password.")
        }
    }
}
