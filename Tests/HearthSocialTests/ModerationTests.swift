import Foundation
import HearthClient
import HearthSocial
import HearthSocialServer
import HearthTesting
import Testing

/// Moderation on the server, reports reaching the admins' queue, and admins' powers — exactly
/// those, given and taken by the operator.
@Suite("Moderation and admins") @MainActor
struct ModerationTests {
    /// The value at `path` as the operator sees it.
    static func read<T: Decodable>(_ path: String, _ harness: SocialHarness, as type: T.Type = T.self) async throws -> T? {
        try? await harness.admin.root.child(path).getData().value(as: T.self)
    }

    /// Waits until the value at `path` (read with the admin credential) satisfies `condition`.
    static func wait<T: Decodable>(
        _ path: String, _ harness: SocialHarness, as type: T.Type = T.self, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: (T?) -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(30)
        var value: T? = try await read(path, harness)
        while !condition(value) {
            guard Date() < deadline else {
                Issue.record("\(path) stayed \(String(describing: value))", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(50))
            value = try await read(path, harness)
        }
    }

    @Test(.timeLimit(.minutes(10))) func postsAndCommentsAreModeratedAndTheOriginalsKeptForAdmins() async throws {
        try await SocialHarness.withServerSide { harness in
            let (bob, carol) = (try await harness.user("Bob Martin"), try await harness.user("Carol Diaz"))
            let bobID = bob.auth.currentUser!.uid
            let compose = ComposeViewModel(client: bob)
            compose.title = "THIS IS AMAZING!!!"
            compose.body = "What the heck happened here"
            let post = try #require(await compose.post()).id
            // Shouting turned to sentence case, listed words masked, in both copies, marked.
            for place in ["posts/\(post)", "user-posts/\(bobID)/\(post)"] {
                try await Self.wait("\(place)/title", harness, as: String.self) { $0 == "This is amazing." }
                #expect(try await Self.read("\(place)/body", harness, as: String.self) == "What the **** happened here")
                #expect(try await Self.read("\(place)/moderated", harness, as: Bool.self) == true)
            }
            #expect(try await Self.read("moderated/posts/\(post)/title", harness, as: String.self) == "THIS IS AMAZING!!!")
            // The original is for admins only.
            await #expect(throws: HearthClientError.self) { try await bob.database.root.child("moderated/posts/\(post)").getData() }
            let detail = PostDetailViewModel(client: bob, postID: post)
            detail.start()
            await eventually { detail.post?.moderated == true && detail.post?.title == "This is amazing." }

            let carolsView = PostDetailViewModel(client: carol, postID: post)
            carolsView.newComment = "darn good"
            await carolsView.addComment()
            carolsView.start()
            await eventually { carolsView.comments.first?.text == "**** good" && carolsView.comments.first?.moderated == true }
            let comment = try #require(carolsView.comments.first)
            #expect(try await Self.read("moderated/comments/\(post)/\(comment.id)/text", harness, as: String.self) == "darn good")
            // Edited into something clean, it is no longer moderated and its original goes.
            await carolsView.editComment(comment, text: "very good")
            await eventually { carolsView.comments.first?.text == "very good" && carolsView.comments.first?.moderated == nil }
            try await Self.wait("moderated/comments/\(post)", harness, as: [String: [String: String]].self) { $0 == nil }

            // Naming someone tells them (unless they blocked the author); an edit that drops the name takes it back.
            let carolID = carol.auth.currentUser!.uid
            try await bob.database.root.child("comments/\(post)").childByAutoId().setValue([
                "author": ["uid": DatabaseValue(bobID), "full_name": "Bob Martin", "profile_picture": ""], "text": "Thanks @Carol Diaz",
                "timestamp": DatabaseValue.serverTimestamp, "mentions": [carolID: "Carol Diaz"],
            ] as DatabaseValue).acknowledged()
            await eventually { carolsView.comments.count == 2 }
            let mention = try #require(carolsView.comments.last)
            let notifications = NotificationListViewModel(client: carol)
            notifications.start()
            await eventually { notifications.notifications.contains { $0.type == .mention } }
            let told = try #require(notifications.notifications.first { $0.type == .mention })
            #expect(told.id == "mention_\(mention.id)" && told.from == bobID && told.name == "Bob Martin" && told.post == post)
            let bobsView = PostDetailViewModel(client: bob, postID: post)
            await bobsView.editComment(mention, text: "Thanks all")
            await eventually { !notifications.notifications.contains { $0.type == .mention } }
        }
    }

    @Test(.timeLimit(.minutes(10))) func reportsReachTheQueueAndAdminsHaveExactlyTheirPowers() async throws {
        try await SocialHarness.withServerSide { harness in
            let (bob, carol, dave) = (try await harness.user("Bob Martin"), try await harness.user("Carol Diaz"), try await harness.user("Dave Admin"))
            let (bobID, carolID, daveID) = (bob.auth.currentUser!.uid, carol.auth.currentUser!.uid, dave.auth.currentUser!.uid)
            let carolsOldToken = try await carol.auth.idToken()
            let compose = ComposeViewModel(client: bob)
            compose.title = "Holiday"
            compose.body = "By the sea"
            compose.addPhoto(ComposeViewModel.PhotoDraft(full: jpeg(2000), thumbnail: jpeg(300)))
            let post = try #require(await compose.post()).id
            let carolsView = PostDetailViewModel(client: carol, postID: post)
            carolsView.start()
            carolsView.newComment = "Nice"
            await carolsView.addComment()
            await carolsView.toggleLike()
            await eventually { carolsView.comments.count == 1 }
            let comment = try #require(carolsView.comments.first)

            // Reports: of the post by Carol, of Carol's comment by Bob.
            await carolsView.report()
            let bobsView = PostDetailViewModel(client: bob, postID: post)
            await bobsView.report(comment)
            #expect(carolsView.errorMessage == nil && bobsView.errorMessage == nil)
            try await Self.wait("reports/posts/\(post)/count", harness, as: Int.self) { $0 == 1 }
            try await Self.wait("reports/comments/\(post)/\(comment.id)/count", harness, as: Int.self) { $0 == 1 }
            // A report of something that does not exist is refused and changes nothing.
            let ghost = PostDetailViewModel(client: carol, postID: "no-such-post")
            await ghost.report()
            #expect(ghost.errorMessage == "You are not allowed to do that.")
            #expect(try await Self.read("postFlags/no-such-post", harness, as: [String: Bool].self) == nil)

            // Not an admin: no queue, no requests.
            let daveQueue = ModerationQueueViewModel(client: dave)
            await daveQueue.start()
            await eventually { daveQueue.isAdmin == false }
            await daveQueue.remove(.init(kind: .post, postID: post, author: bobID, count: 1, text: "", updated: 0))
            #expect(daveQueue.errorMessage == "You are not allowed to do that.")
            #expect(try await Self.read("posts/\(post)/title", harness, as: String.self) == "Holiday")

            // The operator makes Dave an admin (FriendlyPix's admins/ entry).
            try await harness.admin.root.child("admins/\(daveID)").setValue(true).acknowledged()
            let deadline = Date().addingTimeInterval(30)
            while daveQueue.isAdmin != true, Date() < deadline {
                await daveQueue.start()
                await eventually { daveQueue.isAdmin != nil }
            }
            await eventually { daveQueue.reports.count == 2 }
            #expect(daveQueue.reports.map(\.author).sorted() == [bobID, carolID].sorted())
            // Exactly these powers: an admin writes nobody's data and reads nobody's private data.
            await #expect(throws: HearthClientError.self) {
                try await dave.database.root.child("posts/\(post)/title").setValue("Hacked").acknowledged()
            }
            await #expect(throws: HearthClientError.self) { try await dave.database.root.child("notifications/\(bobID)").getData() }
            await #expect(throws: HearthClientError.self) { try await dave.database.root.child("postFlags/\(post)").getData() }
            // An admin's request must be about something that exists.
            await daveQueue.remove(.init(kind: .post, postID: "no-such-post", author: bobID, count: 1, text: "", updated: 0))
            #expect(daveQueue.errorMessage == "You are not allowed to do that.")

            // Dismissing keeps the comment and clears its reports.
            let commentReport = try #require(daveQueue.reports.first { $0.kind == .comment(comment.id) })
            await daveQueue.dismiss(commentReport)
            await eventually { daveQueue.reports.count == 1 }
            #expect(try await Self.read("comments/\(post)/\(comment.id)/text", harness, as: String.self) == "Nice")
            #expect(try await Self.read("commentFlags/\(post)", harness, as: [String: [String: Bool]].self) == nil)

            // Removing the post takes everything with it, photos included; the others' screens follow.
            let photo = try #require(try await Self.read("posts/\(post)/photos/0/full", harness, as: String.self))
            await daveQueue.remove(try #require(daveQueue.reports.first))
            await eventually { carolsView.isDeleted && daveQueue.reports.isEmpty }
            // The request (which names the post) goes once everything else has.
            let removed = Date().addingTimeInterval(30)
            while try await harness.admin.root.child("adminRequests").getData().exists, Date() < removed {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await !harness.admin.root.child("adminRequests").getData().exists)
            for path in ["posts/\(post)", "user-posts/\(bobID)/\(post)", "comments/\(post)", "likes/\(post)", "postFlags/\(post)", "reports/posts/\(post)"] {
                #expect(try await harness.admin.root.child(path).getData().exists == false, "\(path)")
            }
            let cleanup = try harness.cleanup()
            #expect(try await cleanup.traces(of: post) == [])
            await #expect(throws: (any Error).self) { _ = try await bob.storage.reference(photo).getMetadata() }

            // Suspending: Carol can no longer sign in; reinstated, she can.
            await daveQueue.suspend(carolID)
            // Her open app is signed out at once, and knows why (disabling means disabled).
            await eventually("Carol's open app to be signed out", seconds: 20) { carol.auth.currentUser == nil }
            #expect(carol.auth.sessionEndedBy == "USER_DISABLED")
            let carolClient = harness.client()
            let carolAgain = SessionViewModel(client: carolClient)
            carolAgain.email = "carol.diaz@example.com"
            carolAgain.password = "secret-Carol Diaz"
            let until = Date().addingTimeInterval(30)
            repeat {
                await carolAgain.signIn()
            } while carolAgain.errorMessage == nil && Date() < until
            #expect(carolAgain.errorMessage == "This account has been disabled.")
            // Her ID token, still unexpired, can write nothing either.
            try await Self.wait("suspended/\(carolID)", harness, as: Bool.self) { $0 == true }
            let carolsToken = try #require(carolsOldToken)
            #expect(try await harness.server.request(
                "PUT", "/people/\(carolID)/bio.json?auth=\(carolsToken)", body: #""Still here""#).status == 401)
            // Nor can an admin suspend themself.
            await daveQueue.suspend(daveID)
            #expect(daveQueue.errorMessage == "You are not allowed to do that.")
            await daveQueue.reinstate(carolID)
            let back = Date().addingTimeInterval(30)
            repeat {
                await carolAgain.signIn()
            } while carolAgain.errorMessage != nil && Date() < back
            #expect(carolAgain.errorMessage == nil && carolAgain.user?.uid == carolID)
            #expect(try await Self.read("suspended/\(carolID)", harness, as: Bool.self) == nil)
            try await carolClient.database.root.child("people/\(carolID)/bio").setValue("Back").acknowledged()

            // The operator takes the role back.
            try await harness.admin.root.child("admins/\(daveID)").removeValue().acknowledged()
            let revoked = Date().addingTimeInterval(30)
            repeat {
                await daveQueue.start()
                await eventually { daveQueue.isAdmin != nil }
            } while daveQueue.isAdmin == true && Date() < revoked
            #expect(daveQueue.isAdmin == false)
        }
    }
}
