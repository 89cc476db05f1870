import Foundation
import HearthClient
import HearthSocial
import Testing

@Suite("Profiles, feed, search, chat, saved") @MainActor
struct SocialGraphViewModelTests {
    @Test func followingAPersonFillsTheFeedAndTheirNewPostsArriveLive() async throws {
        try await SocialHarness.with { harness in
            // Given Ann with an older post, and Bob who follows nobody
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let annUID = ann.auth.currentUser!.uid
            let older = try await PostViewModelTests.publish(ann, "Older")
            let feed = FeedViewModel(client: bob)
            await feed.start()
            await eventually { !feed.isLoading }
            #expect(feed.posts.isEmpty)
            // When Bob follows Ann
            let profile = ProfileViewModel(client: bob, uid: annUID)
            profile.start()
            await eventually { profile.profile != nil }
            #expect(profile.profile?.fullName == "Ann")
            #expect(!profile.isOwn)
            await profile.toggleFollow()
            #expect(profile.errorMessage == nil)
            // Then her post is in his feed, and her counts show it
            await eventually("Ann's older post in Bob's feed") { feed.posts.map(\.id) == [older.id] }
            await eventually { profile.followerCount == 1 && profile.isFollowing }
            #expect(profile.followers == [Follow(follower: bob.auth.currentUser!.uid, followed: annUID)])
            #expect(feed.entries == [FeedEntry(postID: older.id)])
            #expect(profile.postCount == 1)
            // And a new post of hers arrives live, newest first
            let newer = try await PostViewModelTests.publish(ann, "Newer")
            await eventually("Ann's new post in Bob's feed") { feed.posts.map(\.id) == [newer.id, older.id] }
            // Unfollowing takes her posts out again
            await profile.toggleFollow()
            await eventually { feed.posts.isEmpty }
            #expect(try await harness.admin.root.child("followers/\(annUID)").getData().exists == false)
        }
    }

    @Test func followingMustBeBothSidesAndOnlyAsOneself() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let carol = try await harness.user("Carol")
            let annUID = ann.auth.currentUser!.uid
            let bobUID = bob.auth.currentUser!.uid
            let carolUID = carol.auth.currentUser!.uid
            // One side alone is refused; so is following on someone else's behalf.
            await #expect(throws: HearthClientError.self) { try await bob.database.root.child("followers/\(annUID)/\(bobUID)").setValue(true).acknowledged() }
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.updateChildValues(["followers/\(annUID)/\(carolUID)": true, "people/\(carolUID)/following/\(annUID)": true]).acknowledged()
            }
            let own = ProfileViewModel(client: ann, uid: annUID)
            #expect(own.isOwn)
            await own.toggleFollow()
            #expect(own.errorMessage == "You cannot follow yourself.")
        }
    }

    @Test func blockingUnfollowsAndStopsComments() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let bobUID = bob.auth.currentUser!.uid
            let bobFollowsAnn = ProfileViewModel(client: bob, uid: ann.auth.currentUser!.uid)
            bobFollowsAnn.start()
            await bobFollowsAnn.toggleFollow()
            // Ann blocks Bob
            let annSeesBob = ProfileViewModel(client: ann, uid: bobUID)
            annSeesBob.start()
            await annSeesBob.toggleBlock()
            #expect(annSeesBob.errorMessage == nil)
            await eventually { annSeesBob.isBlocked }
            // Bob can no longer comment on her post
            let detail = PostDetailViewModel(client: bob, postID: post.id)
            detail.newComment = "Hello?"
            await detail.addComment()
            #expect(detail.errorMessage == "You are not allowed to do that.")
            // And Ann is hidden from Bob's search
            let search = SearchViewModel(client: bob)
            search.text = "ann"
            await search.search()
            #expect(search.people.isEmpty)
            await annSeesBob.toggleBlock()
            await eventually { !annSeesBob.isBlocked }
            await search.search()
            #expect(search.people.map(\.fullName) == ["Ann"])
        }
    }

    @Test func searchFindsPeopleByFirstOrLastNameAndPostsByTagOrText() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann Lee")
            _ = try await harness.user("Bob Leeds")
            _ = try await harness.user("Carol Smith")
            _ = try await PostViewModelTests.publish(ann, "Beach day", body: "Waves at #Biarritz")
            _ = try await PostViewModelTests.publish(ann, "Mountains", body: "Snow at #chamonix")
            let search = SearchViewModel(client: harness.client())
            search.text = "lee"
            await search.search()
            #expect(search.people.map(\.fullName) == ["Ann Lee", "Bob Leeds"])
            search.text = "car"
            await search.search()
            #expect(search.people.map(\.fullName) == ["Carol Smith"])
            search.text = "#biarritz"
            await search.search()
            #expect(search.posts.map(\.title) == ["Beach day"])
            search.text = "snow"
            await search.search()
            #expect(search.posts.map(\.title) == ["Mountains"])
            search.text = "a"
            await search.search()
            #expect(search.people.isEmpty && search.posts.isEmpty)
        }
    }

    @Test func aChatMessageArrivesLiveWithAnUnreadCount() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let annUID = ann.auth.currentUser!.uid
            let bobUID = bob.auth.currentUser!.uid
            // Given Bob's conversation list
            let bobList = ConversationListViewModel(client: bob)
            bobList.start()
            // When Ann writes to Bob twice
            let annChat = ConversationViewModel(client: ann, with: bobUID)
            annChat.start()
            annChat.draft = "Hi Bob!"
            await annChat.send()
            #expect(annChat.errorMessage == nil)
            annChat.draft = "Are you there?"
            await annChat.send()
            // Then Bob sees the conversation with two unread messages
            await eventually("Bob's unread count") { bobList.unreadTotal == 2 }
            #expect(bobList.conversations.first?.with == annUID)
            #expect(bobList.conversations.first?.lastMessage == "Are you there?")
            // And opening it shows the messages live and marks them read
            let bobChat = ConversationViewModel(client: bob, with: annUID)
            bobChat.start()
            await eventually { bobChat.messages.count == 2 }
            #expect(bobChat.messages.map(\.text) == ["Hi Bob!", "Are you there?"])
            #expect(!bobChat.isMine(bobChat.messages[0]))
            await eventually("read") { bobList.unreadTotal == 0 }
            annChat.draft = "Good."
            await annChat.send()
            await eventually("a live message") { bobChat.messages.last?.text == "Good." }
            // Outsiders cannot read it or write into it
            let carol = try await harness.user("Carol")
            let conversation = ConversationSummary.id(between: annUID, and: bobUID)
            await #expect(throws: HearthClientError.self) { try await carol.database.root.child("messages/\(conversation)").getData() }
            await #expect(throws: HearthClientError.self) {
                try await carol.database.root.child("messages/\(conversation)/x").setValue(
                    try DatabaseValue.encoding(Message(from: carol.auth.currentUser!.uid, text: "Intruder"))).acknowledged()
            }
        }
    }

    @Test func savedPostsAreListedMostRecentFirst() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let first = try await PostViewModelTests.publish(ann, "First")
            let second = try await PostViewModelTests.publish(ann, "Second")
            let saved = SavedPostsViewModel(client: bob)
            saved.start()
            // A round trip first: connected, each save waits for the server (offline-first
            // writes made before the connection opens would go out together, in one millisecond).
            _ = try await bob.database.root.child("posts/\(first.id)").getData()
            for post in [second, first] {
                let detail = PostDetailViewModel(client: bob, postID: post.id)
                await detail.toggleSaved()
                #expect(detail.errorMessage == nil, "saving \(post.title): \(detail.errorMessage ?? "")")
                try await Task.sleep(for: .milliseconds(5))
            }
            // Both saves are acknowledged: the list settles in the server's order.
            await eventually { saved.posts.count == 2 && saved.entries.map(\.postID) == [first.id, second.id] }
            #expect(saved.posts.map(\.title) == ["First", "Second"])
            #expect(saved.entries.map(\.postID) == [first.id, second.id])
            #expect(saved.entries[0].savedAt > saved.entries[1].savedAt)
        }
    }
}
