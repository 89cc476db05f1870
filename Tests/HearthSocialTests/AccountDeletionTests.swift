import Foundation
import HearthClient
import HearthSocial
import HearthSocialServer
import HearthTesting
import Testing

/// "Delete my account" from the Swift app, with the server side removing what the person made
/// and leaving everyone else's data consistent.
@Suite("Account deletion") @MainActor
struct AccountDeletionTests {
    /// What one post's likes look like in its three places.
    struct Likes: Equatable {
        var count: Int?
        var copyCount: Int?
        var stars: Set<String>
        var copyStars: Set<String>
        var likes: Set<String>
    }

    static func likes(of postID: String, by author: String, _ admin: Database) async throws -> Likes {
        let post = try await admin.root.child("posts/\(postID)").getData()
        let copy = try await admin.root.child("user-posts/\(author)/\(postID)").getData()
        return Likes(
            count: try? post.childSnapshot(forPath: "starCount").value(as: Int.self), copyCount: try? copy.childSnapshot(forPath: "starCount").value(as: Int.self),
            stars: Set(post.childSnapshot(forPath: "stars").childKeys), copyStars: Set(copy.childSnapshot(forPath: "stars").childKeys),
            likes: Set(try await admin.root.child("likes/\(postID)").getData().childKeys))
    }

    @Test(.timeLimit(.minutes(10))) func everythingThePersonMadeGoesAndTheOthersStayConsistent() async throws {
        try await SocialHarness.withServerSide { harness in
            let (ann, bob, carol) = (try await harness.user("Ann Lee"), try await harness.user("Bob Martin"), try await harness.user("Carol Diaz"))
            let (annID, bobID, carolID) = (ann.auth.currentUser!.uid, bob.auth.currentUser!.uid, carol.auth.currentUser!.uid)
            @MainActor func publish(_ client: SocialClient, _ title: String, photo: Bool = false) async throws -> String {
                let compose = ComposeViewModel(client: client)
                compose.title = title
                compose.body = "\(title) #deletion"
                if photo { compose.addPhoto(ComposeViewModel.PhotoDraft(full: jpeg(2000), thumbnail: jpeg(300))) }
                return try #require(await compose.post(), "\(compose.errorMessage ?? "")").id
            }
            let annPost = try await publish(ann, "Ann's harbour", photo: true)
            let bobPost = try await publish(bob, "Bob's alps")
            let carolPost = try await publish(carol, "Carol's swim")
            for (client, post, text) in [(bob, annPost, "Wow"), (ann, bobPost, "Jealous"), (carol, annPost, "Where?"), (ann, carolPost, "Brave")] {
                let detail = PostDetailViewModel(client: client, postID: post)
                detail.newComment = text
                await detail.addComment()
                #expect(detail.errorMessage == nil)
            }
            // Carol names Ann in a comment on Bob's post.
            try await carol.database.root.child("comments/\(bobPost)").childByAutoId().setValue([
                "author": ["uid": DatabaseValue(carolID), "full_name": "Carol Diaz", "profile_picture": ""], "text": "Ask @Ann Lee",
                "timestamp": DatabaseValue.serverTimestamp, "mentions": [annID: "Ann Lee"],
            ] as DatabaseValue).acknowledged()
            for (client, post) in [(ann, bobPost), (ann, carolPost), (bob, annPost), (carol, bobPost)] {
                let detail = PostDetailViewModel(client: client, postID: post)
                await detail.toggleLike()
                #expect(detail.errorMessage == nil)
            }
            for (client, followed) in [(ann, bobID), (bob, annID), (carol, annID)] {
                let profile = ProfileViewModel(client: client, uid: followed)
                await profile.toggleFollow()
                #expect(profile.errorMessage == nil)
            }
            let bobSaves = PostDetailViewModel(client: bob, postID: annPost)
            await bobSaves.toggleSaved()
            await PostDetailViewModel(client: carol, postID: annPost).report()
            await PostDetailViewModel(client: ann, postID: carolPost).report()
            let block = ProfileViewModel(client: carol, uid: annID)
            await block.toggleBlock()
            #expect(block.errorMessage == nil)
            for (client, other, text) in [(ann, bobID, "Coffee?"), (bob, annID, "Yes!"), (carol, bobID, "Hi Bob")] {
                let chat = ConversationViewModel(client: client, with: other)
                chat.draft = text
                await chat.send()
                #expect(chat.errorMessage == nil)
            }
            let cleanup = try harness.cleanup()
            #expect(try await !cleanup.traces(of: annID).isEmpty)
            #expect(try await Self.likes(of: bobPost, by: bobID, harness.admin) == Likes(
                count: 2, copyCount: 2, stars: [annID, carolID], copyStars: [annID, carolID], likes: [annID, carolID]))

            // Without the confirmation, or with a wrong password, nothing happens.
            let deletion = AccountDeletionViewModel(client: ann)
            #expect(deletion.needsPassword && !deletion.canDelete)
            deletion.password = "not-her-password"
            deletion.confirmation = "DELETE"
            await deletion.delete()
            #expect(deletion.errorMessage == "Wrong email address or password." && !deletion.isDeleted)
            #expect(ann.auth.currentUser?.uid == annID)

            deletion.password = "secret-Ann Lee"
            await deletion.delete()
            #expect(deletion.errorMessage == nil && deletion.isDeleted)
            #expect(ann.auth.currentUser == nil)

            // The server side takes everything of Ann's away.
            let deadline = Date().addingTimeInterval(60)
            var traces = try await cleanup.traces(of: annID)
            while !traces.isEmpty, Date() < deadline {
                try await Task.sleep(for: .milliseconds(100))
                traces = try await cleanup.traces(of: annID)
            }
            #expect(traces == [])
            // Other people's data is whole and consistent: her like left Bob's post in all three places.
            #expect(try await Self.likes(of: bobPost, by: bobID, harness.admin) == Likes(
                count: 1, copyCount: 1, stars: [carolID], copyStars: [carolID], likes: [carolID]))
            #expect(try await Self.likes(of: carolPost, by: carolID, harness.admin) == Likes(
                count: 0, copyCount: 0, stars: [], copyStars: [], likes: []))
            // Carol's comment stays, without the mention; Bob's and Carol's comments on Ann's post went with it.
            let bobComments = try await harness.admin.root.child("comments/\(bobPost)").getData()
            #expect(bobComments.childrenCount == 1)
            let kept = try #require(bobComments.children.first)
            #expect(try kept.childSnapshot(forPath: "text").value(as: String.self) == "Ask @Ann Lee")
            #expect(!kept.hasChild("mentions"))
            #expect(!(try await harness.admin.root.child("comments/\(annPost)").getData().exists))
            // Carol's conversation with Bob stays; Bob's with Ann is gone on both sides.
            #expect(try await harness.admin.root.child("user-chats/\(bobID)").getData().childKeys == [ConversationSummary.id(between: bobID, and: carolID)])
            // Bob's and Carol's own posts, follows of each other and profiles are untouched.
            #expect(try await harness.admin.root.child("posts/\(bobPost)/title").getData().value(as: String.self) == "Bob's alps")
            #expect(try await harness.admin.root.child("people/\(carolID)/full_name").getData().value(as: String.self) == "Carol Diaz")
            // Bob is told of Carol's like still; of nothing Ann did.
            let bobsNotifications = try await harness.admin.root.child("notifications/\(bobID)").getData().children
            #expect(try bobsNotifications.map { try $0.childSnapshot(forPath: "from").value(as: String.self) } == [carolID])
            // The account is gone: signing in fails.
            let again = SessionViewModel(client: harness.client())
            again.email = "ann.lee@example.com"
            again.password = "secret-Ann Lee"
            await again.signIn()
            #expect(again.errorMessage == "Wrong email address or password.")

            // A second run (a re-delivery, or one after her old devices wrote again) finds nothing to do.
            let report = try await cleanup.run(uid: annID)
            #expect(report.posts == 0 && report.likes == 0 && report.files == 0)
            #expect(try await cleanup.traces(of: annID) == [])
        }
    }
}
