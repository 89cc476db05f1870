import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

@Suite("Post detail") @MainActor
struct PostDetailViewModelTests {
    @Test func aLikeFromBobUpdatesAnnsCountLiveAndEveryShape() async throws {
        try await SocialHarness.with { harness in
            // Given Ann's post, open on Ann's screen
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let annView = PostDetailViewModel(client: ann, postID: post.id)
            annView.start()
            await eventually { annView.post != nil }
            #expect(annView.likeCount == 0)
            #expect(annView.isOwn)
            // When Bob likes it
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            await bobView.toggleLike()
            #expect(bobView.errorMessage == nil)
            // Then Ann sees the count change, and both copies agree
            await eventually("Ann's count") { annView.likeCount == 1 }
            await eventually { bobView.isLiked }
            #expect(annView.post?.starList == [Star(postID: post.id, uid: bob.auth.currentUser!.uid)])
            let copy = try await harness.admin.root.child("user-posts/\(post.author.uid)/\(post.id)").getData().value(as: Post.self)
            #expect(copy.starCount == 1)
            #expect(copy.stars.keys.sorted() == [bob.auth.currentUser!.uid])
            // FriendlyPix's shape has it too, and Ann is told
            #expect(try await harness.admin.root.child("likes/\(post.id)/\(bob.auth.currentUser!.uid)").getData().number ?? 0 > 1_700_000_000_000)
            let notice = try await harness.admin.root.child("notifications/\(post.author.uid)/like_\(post.id)_\(bob.auth.currentUser!.uid)").getData()
                .value(as: ActivityNotification.self)
            #expect(notice.type == .like && notice.from == bob.auth.currentUser!.uid && notice.name == "Bob" && notice.post == post.id && !notice.read)
            // And liking again takes the like back, from every shape, with the notification
            
            await bobView.toggleLike()
            await eventually { annView.likeCount == 0 }
            for path in ["posts/\(post.id)/stars", "user-posts/\(post.author.uid)/\(post.id)/stars", "likes/\(post.id)",
                         "notifications/\(post.author.uid)"] {
                #expect(try await harness.admin.root.child(path).getData().exists == false, "\(path)")
            }
            #expect(try await harness.admin.root.child("user-posts/\(post.author.uid)/\(post.id)/starCount").getData().number == 0)
        }
    }

    @Test func nobodyStarsTwiceOrForSomeoneElse() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            try await PostDetailViewModelTestsSupport.like(bob, post.id)
            let bobUID = bob.auth.currentUser!.uid
            let annUID = ann.auth.currentUser!.uid
            // Bob adding one more to the count (his star is already there) is refused.
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.updateChildValues([
                    "posts/\(post.id)/starCount": 2, "posts/\(post.id)/stars/\(bobUID)": true,
                ]).acknowledged()
            }
            // So is starring in Ann's name, or moving the count without a star.
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.updateChildValues([
                    "posts/\(post.id)/starCount": 2, "posts/\(post.id)/stars/\(annUID)": true,
                ]).acknowledged()
            }
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.child("posts/\(post.id)/starCount").setValue(5).acknowledged()
            }
            // Nor can he unstar without the count going down.
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.child("posts/\(post.id)/stars/\(bobUID)").removeValue().acknowledged()
            }
            let stored = try await harness.admin.root.child("posts/\(post.id)").getData().value(as: Post.self)
            #expect(stored.starCount == 1)
            #expect(stored.stars == [bobUID: true])
        }
    }

    @Test func likesAtTheSameTimeAllCount() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let post = try await PostViewModelTests.publish(ann, "Popular")
            var fans: [SocialClient] = []
            for index in 0..<5 { fans.append(try await harness.user("Fan \(index)")) }
            // All at once: the same starting count for each, so most first attempts conflict.
            let views = fans.map { PostDetailViewModel(client: $0, postID: post.id) }
            async let first: Void = views[0].toggleLike()
            async let second: Void = views[1].toggleLike()
            async let third: Void = views[2].toggleLike()
            async let fourth: Void = views[3].toggleLike()
            async let fifth: Void = views[4].toggleLike()
            _ = await (first, second, third, fourth, fifth)
            for view in views { #expect(view.errorMessage == nil, "\(view.errorMessage ?? "")") }
            let stored = try await harness.admin.root.child("posts/\(post.id)").getData().value(as: Post.self)
            #expect(stored.starCount == 5)
            #expect(stored.stars.count == 5)
            let copy = try await harness.admin.root.child("user-posts/\(post.author.uid)/\(post.id)").getData().value(as: Post.self)
            #expect(copy.starCount == 5)
            #expect(try await harness.admin.root.child("likes/\(post.id)").getData().childrenCount == 5)
            #expect(try await harness.admin.root.child("notifications/\(post.author.uid)").getData().childrenCount == 5)
        }
    }

    @Test func commentsAreLiveAndOnlyTheirAuthorEditsOrDeletesThem() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let annView = PostDetailViewModel(client: ann, postID: post.id)
            annView.start()
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            // When Bob comments, Ann sees it
            bobView.newComment = "  Beautiful!  "
            await bobView.addComment()
            #expect(bobView.newComment.isEmpty)
            await eventually("Bob's comment on Ann's screen") { annView.comments.count == 1 }
            let comment = try #require(annView.comments.first)
            #expect(comment.text == "Beautiful!")
            #expect(comment.author.fullName == "Bob")
            #expect(!annView.isOwn(comment))
            // Bob edits it; Ann cannot, nor delete it
            await bobView.editComment(comment, text: "Stunning!")
            await eventually { annView.comments.first?.text == "Stunning!" }
            await annView.editComment(comment, text: "Ugly")
            #expect(annView.errorMessage == "You are not allowed to do that.")
            await annView.deleteComment(comment)
            #expect(annView.errorMessage == "You are not allowed to do that.")
            #expect(annView.comments.count == 1)
            // Empty comments are not sent
            bobView.newComment = "   "
            await bobView.addComment()
            #expect(bobView.errorMessage == "Write something first.")
            await bobView.deleteComment(comment)
            await eventually { annView.comments.isEmpty }
        }
    }

    @Test func editingACommentKeepsOnlyThePeopleItStillNames() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let cy = try await harness.user("Cy")
            let annUID = try #require(ann.auth.currentUser?.uid), cyUID = try #require(cy.auth.currentUser?.uid)
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            bobView.newComment = "Thanks @Ann and @Cy"
            await bobView.addComment()
            await eventually { bobView.comments.count == 1 }
            let id = try #require(bobView.comments.first?.id)
            // The people named, as the web app records them when they are picked.
            try await harness.admin.root.child("comments/\(post.id)/\(id)/mentions").setValue([annUID: "Ann", cyUID: "Cy"]).acknowledged()
            await eventually { bobView.comments.first?.mentions?.count == 2 }

            await bobView.editComment(try #require(bobView.comments.first), text: "Thanks @Ann, and everyone")
            #expect(bobView.errorMessage == nil)
            @Sendable func stored() async throws -> HearthSocial.Comment {
                try await harness.admin.root.child("comments/\(post.id)/\(id)").getData().value(as: HearthSocial.Comment.self)
            }
            #expect(try await stored().mentions == [annUID: "Ann"])
            await eventually { bobView.comments.first?.mentions == [annUID: "Ann"] }

            await bobView.editComment(try #require(bobView.comments.first), text: "Thanks, everyone")
            let plain = try await stored()
            #expect(plain.text == "Thanks, everyone" && plain.mentions == nil)
        }
    }

    @Test func likesSavesAndReports() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let annView = PostDetailViewModel(client: ann, postID: post.id)
            annView.start()
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            await bobView.toggleLike()
            // The count and the list of likers come from listeners of their own: wait for both.
            await eventually("the like on Ann's screen") { annView.likeCount == 1 && !annView.likes.isEmpty }
            #expect(annView.likes.map(\.uid) == [bob.auth.currentUser!.uid])
            #expect(annView.likes.allSatisfy { $0.postID == post.id && $0.timestamp > 1_700_000_000_000 })
            await eventually { bobView.isLiked }
            await bobView.toggleLike()
            await eventually { annView.likeCount == 0 }
            await bobView.toggleSaved()
            await eventually { bobView.isSaved }
            #expect(!annView.isSaved)
            await bobView.report()
            #expect(bobView.errorMessage == nil)
            #expect(try await harness.admin.root.child("postFlags/\(post.id)/\(bob.auth.currentUser!.uid)").getData().bool == true)
            #expect(bobView.shareLink.absoluteString == "\(harness.server.baseURL.absoluteString)/#/post/\(post.id)")
        }
    }

    @Test func onlyTheAuthorDeletesAPostAndEverythingOnItGoes() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let post = try await PostViewModelTests.publish(ann, "Sunset #beach", photos: 2)
            let bobView = PostDetailViewModel(client: bob, postID: post.id)
            bobView.start()
            await eventually { bobView.post != nil }
            bobView.newComment = "Nice"
            await bobView.addComment()
            await bobView.toggleLike()
            #expect(bobView.errorMessage == nil)
            // Ann was told of both.
            #expect(try await harness.admin.root.child("notifications/\(post.author.uid)").getData().childrenCount == 2)
            // Bob cannot delete Ann's post, through the app or around it
            await bobView.deletePost()
            #expect(bobView.errorMessage == "Only its author can delete a post.")
            await #expect(throws: HearthClientError.self) { try await bob.database.root.child("posts/\(post.id)").removeValue().acknowledged() }
            // Ann can, and everything that hangs off it goes, files included
            let annView = PostDetailViewModel(client: ann, postID: post.id)
            annView.start()
            await eventually { annView.post != nil }
            await annView.deletePost()
            #expect(annView.errorMessage == nil)
            #expect(annView.isDeleted)
            await eventually("Bob's screen to see the deletion") { bobView.post == nil }
            let admin = harness.admin.root
            for path in ["posts/\(post.id)", "user-posts/\(post.author.uid)/\(post.id)", "comments/\(post.id)", "likes/\(post.id)",
                         "people/\(post.author.uid)/posts/\(post.id)", "hashtags/beach/\(post.id)", "notifications/\(post.author.uid)"] {
                #expect(try await admin.child(path).getData().exists == false, "\(path)")
            }
            let missing = await #expect(throws: HearthClientError.self) {
                try await ann.storage.reference(post.photos[0].full).getMetadata()
            }
            #expect(missing?.kind == .notFound)
        }
    }
}
