import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

/// Posts with photos made offline wait on the device (``PostQueue``) and are sent when the
/// connection is back: against a real server, with the app's rules.
@Suite("Posts made offline") @MainActor
struct PostQueueTests {
    static func photo(_ seed: UInt8, alt: String = "") -> ComposeViewModel.PhotoDraft {
        .init(full: jpeg(60_000, seed: seed), thumbnail: jpeg(6_000, seed: seed), alt: alt)
    }

    /// Composes a post with `photos` while `client` is offline.
    static func composeOffline(_ client: SocialClient, _ title: String, photos: [ComposeViewModel.PhotoDraft]) async -> ComposeViewModel {
        let compose = ComposeViewModel(client: client)
        compose.title = title
        for photo in photos { compose.addPhoto(photo) }
        await compose.post()
        return compose
    }

    @Test func aPostWithPhotosMadeOfflineWaitsAndIsSentAfterTheAppIsLaunchedAgain() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cache = folder.url.appendingPathComponent("app.sqlite")
        try await SocialHarness.with { harness in
            var postID = ""
            do {
                let ann = try await harness.user("Ann", cacheURL: cache)
                let status = SyncStatusViewModel(client: ann)
                status.start()
                ann.database.goOffline()
                await eventually("offline") { !ann.database.isConnected && !status.isOnline }
                let compose = await Self.composeOffline(ann, "Made offline", photos: [Self.photo(1, alt: " A hill "), Self.photo(2)])
                #expect(compose.errorMessage == nil)
                #expect(compose.wasQueued)
                #expect(compose.photos.isEmpty && compose.title.isEmpty, "the form is cleared, as for a sent post")
                await eventually("the waiting post") { status.waitingPosts.count == 1 }
                let waiting = try #require(status.waitingPosts.first)
                postID = waiting.id
                #expect(waiting.title == "Made offline")
                #expect(waiting.photos.map(\.alt) == ["A hill", ""])
                #expect(status.message == "Offline — 1 change will sync")
                // Its thumbnails are on the device, to show it meanwhile.
                #expect(waiting.thumbnailFiles.map { FileManager.default.contents(atPath: $0.path) } == [jpeg(6_000, seed: 1), jpeg(6_000, seed: 2)])
                #expect(try await harness.admin.root.child("posts/\(postID)").getData().exists == false)
                status.stop()
                // The app quits here, still offline.
            }
            // Launched again, signed in again and online: the post is sent, photos first.
            let again = harness.client(cacheURL: cache)
            let session = SessionViewModel(client: again)
            session.email = "ann@example.com"
            session.password = "secret-Ann"
            await session.signIn()
            #expect(session.errorMessage == nil)
            let status = SyncStatusViewModel(client: again)
            status.start()
            await eventually("the post published", seconds: 60) { status.isOnline && status.waitingPosts.isEmpty }
            var stored = try await harness.admin.root.child("posts/\(postID)").getData()
            for _ in 0..<500 where !stored.exists {
                try await Task.sleep(for: .milliseconds(20))
                stored = try await harness.admin.root.child("posts/\(postID)").getData()
            }
            let post = try stored.value(as: Post.self)
            #expect(post.title == "Made offline")
            #expect(post.author.fullName == "Ann")
            #expect(post.photos.map(\.alt) == ["A hill", nil])
            let uid = try #require(session.user?.uid)
            #expect(post.photos.map(\.full) == ["\(uid)/full/\(postID)/0.jpg", "\(uid)/full/\(postID)/1.jpg"])
            for (index, photo) in post.photos.enumerated() {
                #expect(try await again.storage.reference(photo.full).data() == jpeg(60_000, seed: UInt8(index + 1)))
                #expect(try await again.storage.reference(photo.thumb).data() == jpeg(6_000, seed: UInt8(index + 1)))
            }
            #expect(try await harness.admin.root.child("user-posts/\(uid)/\(postID)/title").getData().string == "Made offline")
            // Nothing is left waiting on the device.
            let left = try FileManager.default.subpathsOfDirectory(atPath: folder.url.appendingPathComponent("app-post-queue").path)
            #expect(left.filter { $0.hasSuffix("post.json") }.isEmpty, "\(left)")
        }
    }

    @Test func aPostTheServerRefusesIsDroppedWithItsFilesAndSaidSo() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let status = SyncStatusViewModel(client: ann)
            status.start()
            ann.database.goOffline()
            await eventually("offline") { !ann.database.isConnected && !status.isOnline }
            let compose = await Self.composeOffline(ann, "Taken", photos: [Self.photo(3)])
            let waiting = await ann.postQueue.waitingPosts()
            let queued = try #require(waiting.first)
            // Meanwhile the post's place is Bob's: the rules refuse Ann's write there.
            let bobsPost = try await PostViewModelTests.publish(bob, "Bob's")
            let bobsValue = try await harness.admin.root.child("posts/\(bobsPost.id)").getData()
            try await harness.admin.root.child("posts/\(queued.id)").setValue(bobsValue.value).acknowledged()
            #expect(compose.wasQueued)
            ann.database.goOnline()
            await eventually("the refusal", seconds: 60) { status.lateRefusal != nil }
            #expect(status.lateRefusal == "A post made offline was refused: You are not allowed to do that.")
            #expect(status.waitingPosts.isEmpty)
            let annUID = try #require(ann.auth.currentUser?.uid)
            // Bob's post stands, and the photo Ann's queue had uploaded is removed again.
            #expect(try await harness.admin.root.child("posts/\(queued.id)/title").getData().string == "Bob's")
            await #expect(throws: HearthClientError.self) {
                _ = try await bob.storage.reference("\(annUID)/full/\(queued.id)/0.jpg").data()
            }
        }
    }

    @Test func aWaitingPostCanBeCancelledAndAtMostTenWait() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let status = SyncStatusViewModel(client: ann)
            status.start()
            ann.database.goOffline()
            await eventually("offline") { !ann.database.isConnected && !status.isOnline }
            for index in 0..<PostQueue.maxPosts {
                let compose = await Self.composeOffline(ann, "Post \(index)", photos: [Self.photo(UInt8(index))])
                #expect(compose.wasQueued && compose.errorMessage == nil)
            }
            let eleventh = await Self.composeOffline(ann, "One too many", photos: [Self.photo(20)])
            #expect(eleventh.errorMessage == "10 posts are already waiting to be sent. Try again when the connection is back.")
            #expect(eleventh.wasQueued == false)
            #expect(eleventh.photos.count == 1, "the form keeps what was not sent")
            await eventually("ten waiting") { status.waitingPosts.count == 10 }
            #expect(status.waitingPosts.map(\.title) == (0..<10).map { "Post \($0)" })
            // All but the first are given up on; back online, only that one is published.
            for post in status.waitingPosts.dropFirst() { await status.cancelWaitingPost(post.id) }
            await eventually("one waiting") { status.waitingPosts.count == 1 }
            let kept = try #require(status.waitingPosts.first)
            ann.database.goOnline()
            await eventually("sent", seconds: 60) { status.waitingPosts.isEmpty }
            let annUID = try #require(ann.auth.currentUser?.uid)
            var posts = try await harness.admin.root.child("user-posts/\(annUID)").getData()
            for _ in 0..<500 where posts.childrenCount == 0 {
                try await Task.sleep(for: .milliseconds(20))
                posts = try await harness.admin.root.child("user-posts/\(annUID)").getData()
            }
            #expect(posts.childKeys == [kept.id])
        }
    }

    @Test func aPostWithoutPhotosMadeOfflineIsTheDatabasesToKeep() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            ann.database.goOffline()
            await eventually("offline") { !ann.database.isConnected }
            let compose = ComposeViewModel(client: ann)
            compose.title = "Words only"
            compose.body = "Sent with the database's own queue."
            let post = try #require(await compose.post())
            #expect(compose.wasQueued == false)
            #expect(await ann.postQueue.waitingPosts().isEmpty)
            ann.database.goOnline()
            var title = try await harness.admin.root.child("posts/\(post.id)/title").getData().string
            for _ in 0..<500 where title == nil {
                try await Task.sleep(for: .milliseconds(20))
                title = try await harness.admin.root.child("posts/\(post.id)/title").getData().string
            }
            #expect(title == "Words only")
        }
    }
}
