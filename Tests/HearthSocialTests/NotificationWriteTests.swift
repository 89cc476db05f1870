import Foundation
import HearthClient
import HearthSocial
import Testing

/// The notifications the ViewModels write with a like, a comment or a follow, as the web app
/// does, and the rules that keep them true.
@Suite("Notifications") @MainActor
struct NotificationWriteTests {
    @Test func aCommentAndAFollowTellTheirRecipientAndUndoingTakesItBack() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let annUID = ann.auth.currentUser!.uid
            let bobUID = bob.auth.currentUser!.uid
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let inbox = harness.admin.root.child("notifications/\(annUID)")

            // Bob comments: Ann is told, under the comment's ID.
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            bobView.newComment = "Lovely"
            await bobView.addComment()
            #expect(bobView.errorMessage == nil)
            await eventually { bobView.comments.count == 1 }
            let comment = try #require(bobView.comments.first)
            let commented = try await inbox.child("comment_\(comment.id)").getData().value(as: ActivityNotification.self)
            #expect(commented.type == .comment && commented.from == bobUID && commented.name == "Bob")
            #expect(commented.post == post.id && commented.comment == comment.id && !commented.read)
            #expect((commented.timestamp.milliseconds ?? 0) > 1_700_000_000_000)

            // Bob follows Ann: told too; unfollowing takes it back.
            let profile = ProfileViewModel(client: bob, uid: annUID)
            profile.start()
            await eventually { profile.profile != nil }
            await profile.toggleFollow()
            #expect(profile.errorMessage == nil)
            let followed = try await inbox.child(ActivityNotification.id(.follow, from: bobUID)).getData().value(as: ActivityNotification.self)
            #expect(followed.type == .follow && followed.from == bobUID && followed.post == nil)
            await eventually { profile.isFollowing }
            await profile.toggleFollow()
            #expect(profile.errorMessage == nil)
            #expect(try await inbox.child("follow_\(bobUID)").getData().exists == false)

            // Deleting the comment takes its notification with it.
            await bobView.deleteComment(comment)
            #expect(bobView.errorMessage == nil)
            #expect(try await inbox.getData().exists == false)

            // Ann's own comment on her own post tells nobody.
            let annView = PostDetailViewModel(client: ann, postID: post.id)
            annView.start()
            await eventually { annView.post != nil }
            annView.newComment = "Thanks"
            await annView.addComment()
            #expect(annView.errorMessage == nil)
            #expect(try await inbox.getData().exists == false)
        }
    }

    @Test func onlyTheRecipientReadsAndMarksThemAndNobodyForgesOne() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let carol = try await harness.user("Carol")
            let annUID = ann.auth.currentUser!.uid
            let bobUID = bob.auth.currentUser!.uid
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            // Bob likes it once he sees it (the app's way: from the post on screen).
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            await bobView.toggleLike()
            #expect(bobView.errorMessage == nil)
            await eventually { bobView.isLiked }
            let id = ActivityNotification.id(.like, from: bobUID, post: post.id)
            let path = "notifications/\(annUID)/\(id)"
            #expect(try await harness.admin.root.child(path).getData().exists)

            // Carol neither reads Ann's notifications nor marks them; Bob cannot mark his read.
            await #expect(throws: HearthClientError.self) { _ = try await carol.database.root.child("notifications/\(annUID)").getData() }
            await #expect(throws: HearthClientError.self) { try await carol.database.root.child("\(path)/read").setValue(true).acknowledged() }
            await #expect(throws: HearthClientError.self) { try await bob.database.root.child("\(path)/read").setValue(true).acknowledged() }
            // Carol cannot write one in Bob's name, nor one about a like she did not make.
            let forged = ActivityNotification(type: .like, from: bobUID, name: "Bob", post: post.id)
            await #expect(throws: HearthClientError.self) {
                try await carol.database.root.child(path).setValue(try DatabaseValue.encoding(forged)).acknowledged()
            }
            let carolUID = carol.auth.currentUser!.uid
            let unliked = ActivityNotification(type: .like, from: carolUID, name: "Carol", post: post.id)
            await #expect(throws: HearthClientError.self) {
                try await carol.database.root.child(ActivityNotification.path(to: annUID, .like, from: carolUID, post: post.id))
                    .setValue(try DatabaseValue.encoding(unliked)).acknowledged()
            }
            // Ann reads hers and marks it read; she cannot make it unread again.
            #expect(try await ann.database.root.child("notifications/\(annUID)").getData().childrenCount == 1)
            try await ann.database.root.child("\(path)/read").setValue(true).acknowledged()
            await #expect(throws: HearthClientError.self) { try await ann.database.root.child("\(path)/read").setValue(false).acknowledged() }
            #expect(try await harness.admin.root.child("\(path)/read").getData().bool == true)
            #expect(try await harness.admin.root.child("notifications/\(annUID)").getData().childrenCount == 1)
            // And she may delete it.
            try await ann.database.root.child(path).removeValue().acknowledged()
            #expect(try await harness.admin.root.child(path).getData().exists == false)
        }
    }
}

@Suite("Notification list") @MainActor
struct NotificationListViewModelTests {
    @Test func theListIsLiveNewestFirstAndMarkingReadClearsTheUnreadCount() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let annUID = ann.auth.currentUser!.uid
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let list = NotificationListViewModel(client: ann)
            list.start()
            // Bob likes, then follows: Ann's list shows both, newest first, unread.
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            await bobView.toggleLike()
            await eventually("the like's notification") { list.notifications.count == 1 }
            let profile = ProfileViewModel(client: bob, uid: annUID)
            profile.start()
            await eventually { profile.profile != nil }
            await profile.toggleFollow()
            await eventually("the follow's notification") { list.notifications.count == 2 }
            #expect(list.notifications.map(\.type) == [.follow, .like])
            #expect(list.notifications.map(\.name) == ["Bob", "Bob"])
            #expect(list.unreadCount == 2)
            await list.markAllRead()
            #expect(list.errorMessage == nil)
            await eventually("read") { list.unreadCount == 0 }
            #expect(try await harness.admin.root.child("notifications/\(annUID)").getData().children.allSatisfy { $0.childSnapshot(forPath: "read").bool == true })
            // Signed out, there is nothing to list.
            let signedOut = NotificationListViewModel(client: harness.client())
            signedOut.start()
            #expect(signedOut.errorMessage == "Sign in first.")
        }
    }
}
