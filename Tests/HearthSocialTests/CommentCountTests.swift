import Foundation
import HearthClient
import HearthSocial
import HearthSocialServer
import Testing

/// A post's `commentCount`, kept by the server side: what lists show beside the likes.
@Suite("Comment counts") @MainActor
struct CommentCountTests {
    @Test(.timeLimit(.minutes(10))) func theServerCountsCommentsInBothCopiesAndNobodyElseWritesTheCount() async throws {
        try await SocialHarness.withServerSide { harness in
            let (bob, carol) = (try await harness.user("Bob"), try await harness.user("Carol"))
            let bobID = try #require(bob.auth.currentUser?.uid)
            let post = try await PostViewModelTests.publish(bob, "Counted").id
            let carolsView = PostDetailViewModel(client: carol, postID: post)
            carolsView.start()
            defer { carolsView.stop() }
            await eventually { carolsView.post != nil }
            for text in ["First", "Second", "Third"] {
                carolsView.newComment = text
                await carolsView.addComment()
            }
            for place in ["posts/\(post)", "user-posts/\(bobID)/\(post)"] {
                try await ModerationTests.wait("\(place)/commentCount", harness, as: Int.self) { $0 == 3 }
            }
            // The lists' model reads it.
            let mine = PostListViewModel(client: bob, kind: .mine)
            mine.start()
            defer { mine.stop() }
            await eventually("the count in Bob's list") { mine.posts.first?.commentCount == 3 }
            // Likes still pass the rules beside the count.
            try await PostDetailViewModelTestsSupport.like(carol, post)
            #expect(try await ModerationTests.read("posts/\(post)/starCount", harness, as: Int.self) == 1)

            // Nobody but the server writes it: not the author, not a commenter.
            for (who, client) in [("the author", bob), ("a reader", carol)] {
                await #expect(throws: HearthClientError.self, "\(who)") {
                    try await client.database.root.child("posts/\(post)/commentCount").setValue(99).acknowledged()
                }
            }
            #expect(try await ModerationTests.read("posts/\(post)/commentCount", harness, as: Int.self) == 3)

            // Removed comments count down; none left, no count.
            await eventually { carolsView.comments.count == 3 }
            await carolsView.deleteComment(try #require(carolsView.comments.first))
            try await ModerationTests.wait("posts/\(post)/commentCount", harness, as: Int.self) { $0 == 2 }
            for comment in carolsView.comments { await carolsView.deleteComment(comment) }
            try await ModerationTests.wait("posts/\(post)/commentCount", harness, as: Int.self) { $0 == nil }
            try await ModerationTests.wait("user-posts/\(bobID)/\(post)/commentCount", harness, as: Int.self) { $0 == nil }
        }
    }

    @Test(.timeLimit(.minutes(10))) func postsFromBeforeTheCountAreCountedAtStartAndADeletedPostLeavesNoCount() async throws {
        try await SocialHarness.withServerSide { harness in
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(bob, "Older").id
            let view = PostDetailViewModel(client: bob, postID: post)
            view.start()
            defer { view.stop() }
            await eventually { view.post != nil }
            for text in ["One", "Two"] {
                view.newComment = text
                await view.addComment()
            }
            try await ModerationTests.wait("posts/\(post)/commentCount", harness, as: Int.self) { $0 == 2 }
            // As a server from before the count left it.
            try await harness.admin.root.child("posts/\(post)/commentCount").removeValue().acknowledged()
            try await #require(harness.social).started()
            #expect(try await ModerationTests.read("posts/\(post)/commentCount", harness, as: Int.self) == 2)

            // The post deleted with its comments: nothing of it is left, no count either.
            await view.deletePost()
            for place in ["comments/\(post)", "posts/\(post)"] {
                let deadline = Date().addingTimeInterval(30)
                while try await harness.admin.root.child(place).getData().exists, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(try await harness.admin.root.child(place).getData().exists == false, "\(place)")
            }
        }
    }
}
