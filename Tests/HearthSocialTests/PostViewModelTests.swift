import Foundation
import HearthClient
import HearthSocial
import Testing

@Suite("Posts") @MainActor
struct PostViewModelTests {
    /// `client` publishes a post titled `title` through the compose screen.
    static func publish(_ client: SocialClient, _ title: String, body: String = "Hello #world", photos: Int = 0) async throws -> Post {
        let compose = ComposeViewModel(client: client)
        compose.title = title
        compose.body = body
        for index in 0..<photos {
            compose.addPhoto(.init(full: jpeg(50_000, seed: UInt8(index)), thumbnail: jpeg(5_000, seed: UInt8(index))))
        }
        let post = try #require(await compose.post(), "\(compose.errorMessage ?? "")")
        return post
    }

    // MARK: - Compose

    @Test func hashtagsAreWhatTheRulesCanIndex() {
        #expect(Post.hashtags(in: "#Sunset at the #café, #nice! #a_b1 #sunset #") == ["sunset", "nice", "a_b1"])
        #expect(Post.hashtags(in: "#" + String(repeating: "a", count: 51)) == [])
        #expect(Post.hashtags(in: "#" + String(repeating: "a", count: 50)) == [String(repeating: "a", count: 50)])
        #expect(Post.hashtags(in: "no tags here") == [])
    }

    @Test func aPostWithATagTheIndexCannotHoldIsStillPublished() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let compose = ComposeViewModel(client: ann)
            compose.title = "Café"
            compose.body = "Coffee at the #café with #friends"
            let post = try #require(await compose.post(), "\(compose.errorMessage ?? "")")
            #expect(try await harness.admin.root.child("hashtags/friends/\(post.id)").getData().bool == true)
            #expect(try await harness.admin.root.child("hashtags").getData().childKeys == ["friends"])
        }
    }

    @Test func composingChecksThenUploadsAndPublishesInOneWrite() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let compose = ComposeViewModel(client: ann)
            // Given an empty post, it cannot be sent
            #expect(compose.problem == "Add a photo, or say something.")
            compose.title = "Sunset"
            #expect(compose.problem == "Say something in the post.")
            compose.body = String(repeating: "x", count: 2001)
            #expect(compose.problem == "The post is longer than 2000 characters.")
            compose.body = "Look at this #sunset over #Nice"
            #expect(compose.canPost)
            // At most three photos, images only
            for index in 0..<4 {
                compose.addPhoto(.init(full: jpeg(40_000, seed: UInt8(index)), thumbnail: jpeg(4_000)))
            }
            #expect(compose.photos.count == 3)
            #expect(compose.errorMessage == "A post has at most 3 photos.")
            compose.removePhoto(at: 2)
            compose.addPhoto(.init(full: Data("text".utf8), thumbnail: Data(), contentType: "text/plain"))
            #expect(compose.errorMessage == "Only images can be added.")
            #expect(compose.photos.count == 2)

            // When it is posted
            let post = try #require(await compose.post())
            // Then the post, its copy, the indexes and the files are all there
            #expect(compose.progress == 1)
            #expect(compose.title.isEmpty && compose.photos.isEmpty)
            let stored = try await harness.admin.root.child("posts/\(post.id)").getData().value(as: Post.self)
            #expect(stored.title == "Sunset")
            #expect(stored.author.fullName == "Ann")
            #expect(stored.photos.count == 2)
            #expect(stored.timestamp.milliseconds != nil)
            let copy = try await harness.admin.root.child("user-posts/\(post.author.uid)/\(post.id)").getData()
            #expect(copy.exists)
            #expect(try await harness.admin.root.child("hashtags/sunset/\(post.id)").getData().bool == true)
            #expect(try await harness.admin.root.child("hashtags/nice/\(post.id)").getData().bool == true)
            #expect(try await harness.admin.root.child("feed/\(post.author.uid)/\(post.id)").getData().bool == true)
            let thumbnail = try await ann.storage.reference(stored.photos[1].thumb).data()
            #expect(thumbnail == jpeg(4_000))
        }
    }

    @Test func aPhotoIsAPostInTheOrderChosenWithItsAltText() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let compose = ComposeViewModel(client: ann)
            #expect(compose.problem == "Add a photo, or say something.")
            // Three photos, told apart by their bytes; the third moved first, the second removed.
            for index in 0..<3 {
                compose.addPhoto(.init(full: jpeg(30_000 + index, seed: UInt8(index)), thumbnail: jpeg(3_000 + index)))
            }
            #expect(compose.problem == nil)
            compose.setAlt("  A square window ", forPhotoAt: 2)
            compose.setAlt("A wide field", forPhotoAt: 0)
            compose.movePhoto(from: 2, to: 0)
            compose.movePhoto(from: 5, to: 0)
            compose.removePhoto(at: 2)
            #expect(compose.photos.map(\.full.count) == [30_002, 30_000])
            compose.setAlt(String(repeating: "x", count: 1001), forPhotoAt: 1)
            #expect(compose.problem == "A photo's description is longer than 1000 characters.")
            compose.setAlt("A wide field", forPhotoAt: 1)

            // Posted with no title and no body.
            let post = try #require(await compose.post(), "\(compose.errorMessage ?? "")")
            let stored = try await harness.admin.root.child("posts/\(post.id)").getData().value(as: Post.self)
            #expect(stored.title.isEmpty && stored.body.isEmpty)
            #expect(stored.photos.map(\.alt) == ["A square window", "A wide field"])
            #expect(try await ann.storage.reference(stored.photos[0].full).data() == jpeg(30_002, seed: 2))
            #expect(try await ann.storage.reference(stored.photos[1].thumb).data() == jpeg(3_000))
        }
    }

    @Test func withoutAPhotoTheWordsAreStillNeeded() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let uid = try #require(ann.auth.currentUser?.uid)
            let compose = ComposeViewModel(client: ann)
            compose.body = "Only words"
            #expect(compose.problem == "Add a title.")
            compose.addPhoto(.init(full: jpeg(10_000), thumbnail: jpeg(1_000)))
            #expect(compose.problem == nil)
            // A client skipping the check is refused by the rules: empty words need a photo, and
            // an alt text must be a short string.
            let author = Author(uid: uid, fullName: "Ann")
            for (id, value) in [
                ("bare", try DatabaseValue.encoding(Post(id: "bare", author: author, title: "", body: ""))),
                ("untitled", try DatabaseValue.encoding(Post(id: "untitled", author: author, title: "", body: "Just words"))),
                ("longAlt", try DatabaseValue.encoding(Post(id: "longAlt", author: author, title: "", body: "", photos: [
                    Photo(full: "\(uid)/full/longAlt/0.jpg", thumb: "\(uid)/thumb/longAlt/0.jpg", alt: String(repeating: "x", count: 1001)),
                ]))),
            ] {
                await #expect(throws: HearthClientError.self, "\(id)") {
                    try await ann.database.root.updateChildValues(["posts/\(id)": value]).acknowledged()
                }
                #expect(try await harness.admin.root.child("posts/\(id)").getData().exists == false)
            }
        }
    }

    @Test func nobodyPostsAsSomeoneElseOrWhenSignedOut() async throws {
        try await SocialHarness.with { harness in
            let signedOut = ComposeViewModel(client: harness.client())
            signedOut.title = "Hi"
            signedOut.body = "There"
            #expect(await signedOut.post() == nil)
            #expect(signedOut.errorMessage == "Sign in first.")
            // A client forging the author is refused by the rules.
            let bob = try await harness.user("Bob")
            let ann = try await harness.user("Ann")
            let forged = Post(id: "forged", author: Author(uid: ann.auth.currentUser!.uid, fullName: "Ann"), title: "Hi", body: "From Ann?")
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.updateChildValues(["posts/forged": try DatabaseValue.encoding(forged)]).acknowledged()
            }
            #expect(try await harness.admin.root.child("posts/forged").getData().exists == false)
        }
    }

    // MARK: - Lists

    @Test func aNewPostAppearsLiveInSomeoneElsesList() async throws {
        try await SocialHarness.with { harness in
            // Given Bob watching recent posts
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let recent = PostListViewModel(client: bob, kind: .recent)
            recent.start()
            await eventually("the first answer") { !recent.isLoading }
            #expect(recent.posts.isEmpty)
            // When Ann posts twice
            let first = try await Self.publish(ann, "First")
            let second = try await Self.publish(ann, "Second")
            // Then Bob's list shows both, newest first, without reloading
            await eventually("both posts") { recent.posts.count == 2 }
            #expect(recent.posts.map(\.id) == [second.id, first.id])
            #expect(recent.posts.first?.author.fullName == "Ann")
        }
    }

    @Test func myPostsTopPostsAndPaging() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            var annPosts: [Post] = []
            for index in 0..<3 { annPosts.append(try await Self.publish(ann, "Ann \(index)")) }
            let bobPost = try await Self.publish(bob, "Bob 0")
            // Bob stars Ann's first post; Ann stars it too; Ann stars Bob's.
            try await PostDetailViewModelTestsSupport.like(bob, annPosts[0].id)
            try await PostDetailViewModelTestsSupport.like(ann, annPosts[0].id)
            try await PostDetailViewModelTestsSupport.like(ann, bobPost.id)

            let mine = PostListViewModel(client: ann, kind: .mine)
            mine.start()
            await eventually { mine.posts.count == 3 }
            #expect(mine.posts.map(\.title) == ["Ann 2", "Ann 1", "Ann 0"])

            let top = PostListViewModel(client: bob, kind: .top, pageSize: 2)
            top.start()
            await eventually { top.posts.count == 2 }
            #expect(top.posts.map(\.title) == ["Ann 0", "Bob 0"])
            #expect(top.posts.map(\.starCount) == [2, 1])
            #expect(top.hasMore)
            top.loadMore()
            await eventually { top.posts.count == 4 }
            #expect(!top.hasMore)

            let signedOut = PostListViewModel(client: harness.client(), kind: .mine)
            signedOut.start()
            #expect(signedOut.errorMessage == "Sign in first.")
        }
    }
}

enum PostDetailViewModelTestsSupport {
    @MainActor
    static func like(_ client: SocialClient, _ postID: String) async throws {
        let detail = PostDetailViewModel(client: client, postID: postID)
        // As in the app, from the post on screen: its author's write may still be on its way.
        detail.start()
        await eventually("the post on the liker's screen") { detail.post != nil }
        defer { detail.stop() }
        await detail.toggleLike()
        #expect(detail.errorMessage == nil, "\(detail.errorMessage ?? "")")
    }
}
