import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

@Suite("Demo data") @MainActor
struct DemoDataTests {
    @Test func theDemoContentPassesTheAppsRulesAndItsAccountsWork() async throws {
        try await SocialHarness.with { harness in
            // The rules the app ships are the ones the harness runs.
            #expect(DemoData.databaseRules == SocialHarness.databaseRules)
            #expect(DemoData.storageRules == SocialHarness.storageRules)
            let accounts = try await DemoData.seed(url: harness.server.baseURL)
            #expect(accounts.map(\.email) == ["ann@demo.hearth", "bob@demo.hearth", "carol@demo.hearth"])
            #expect(Set(accounts.map(\.password)).count == 3)

            // Each account signs in with the password printed for it.
            let client = harness.client()
            let session = SessionViewModel(client: client)
            session.email = accounts[0].email
            session.password = accounts[0].password
            await session.signIn()
            #expect(session.user?.displayName == "Ann Lee")

            let recent = PostListViewModel(client: client, kind: .recent, pageSize: 10)
            recent.start()
            await eventually { recent.posts.count == 6 }
            #expect(recent.posts.last?.title == "Evening at the harbour")
            #expect(recent.posts.last?.starCount == 2)
            // Every like is in both shapes: each star has its likes/ entry and the counts agree,
            // in posts/ and in user-posts/.
            let admin = harness.admin.root
            let likes = try await admin.child("likes").getData()
            for post in recent.posts {
                let starrers = Set(post.stars.filter(\.value).keys)
                #expect(Set(likes.childSnapshot(forPath: post.id).childKeys) == starrers, "\(post.title)")
                #expect(post.starCount == starrers.count, "\(post.title)")
                let copy = try await admin.child("user-posts/\(post.author.uid)/\(post.id)").getData().value(as: Post.self)
                #expect(copy.starCount == post.starCount && copy.stars == post.stars, "\(post.title)")
            }
            // The likes and follows told their recipients.
            let annUID = try #require(session.user?.uid)
            #expect(try await admin.child("notifications/\(annUID)").getData().childrenCount > 0)
            let photo = try #require(recent.posts.last?.photos.first)
            #expect(try await client.storage.reference(photo.thumb).getMetadata().contentType == "image/jpeg")

            // Ann follows Bob: his posts are in her feed.
            let feed = FeedViewModel(client: client)
            await feed.start()
            await eventually { feed.posts.count == 4 }
            // And she has a conversation with an unread answer from Bob.
            let chats = ConversationListViewModel(client: client)
            chats.start()
            await eventually { chats.conversations.count == 1 }
            #expect(chats.conversations.first?.lastMessage == "Coffee tomorrow?")
        }
    }
}
