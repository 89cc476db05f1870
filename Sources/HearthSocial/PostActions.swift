import Foundation
import HearthClient

/// The writes the app makes on posts, each in the shape its rules require: one atomic
/// multi-path update wherever several places change together.
struct PostActions: Sendable {
    let client: SocialClient

    var root: DatabaseReference { client.database.root }

    /// Publishes a post: `posts/{id}`, its copy in `user-posts/{uid}/{id}`, the author's
    /// `people/{uid}/posts/{id}` and `feed/{uid}/{id}`, and its hashtags, in one write.
    func publish(_ post: Post) async throws {
        try await client.settle(root.updateChildValues(try Self.publishing(post)))
    }

    /// The one multi-path update that publishes `post`.
    static func publishing(_ post: Post) throws -> [String: DatabaseValue] {
        let value = try DatabaseValue.encoding(post)
        var updates: [String: DatabaseValue] = [
            "posts/\(post.id)": value,
            "user-posts/\(post.author.uid)/\(post.id)": value,
            "people/\(post.author.uid)/posts/\(post.id)": true,
            "feed/\(post.author.uid)/\(post.id)": true,
        ]
        for tag in post.hashtags { updates["hashtags/\(tag)/\(post.id)"] = true }
        return updates
    }

    /// Likes or unlikes a post for the signed-in user: ONE write to both reference data
    /// shapes — the Quickstart's `starCount` and `stars/{uid}` in `posts/` and `user-posts/`,
    /// and FriendlyPix's `likes/{postId}/{uid}` (the server's time) — with the author's
    /// notification (removed again on unliking).
    ///
    /// A transaction: it reads the count, writes count ± 1 with the user's entries, and the
    /// rules accept the write only if the count it started from is still current; otherwise it
    /// reads again and retries.
    /// - Returns: whether the post is now liked, and its count.
    @discardableResult
    func toggleLike(_ postID: String, attempts: Int = 10) async throws -> (liked: Bool, count: Int) {
        let user = try client.requireUser()
        guard let me = client.author else { throw SocialError.notSignedIn }
        for attempt in 1...attempts {
            let snapshot = try await root.child("posts/\(postID)").getData()
            guard let post = snapshot.decoded(Post.self) else { throw SocialError.invalid("That post is not there any more.") }
            let liked = post.isStarred(by: user.uid)
            let count = post.starCount + (liked ? -1 : 1)
            let star: DatabaseValue = liked ? .null : true
            var updates: [String: DatabaseValue] = [
                "posts/\(postID)/starCount": DatabaseValue(count),
                "posts/\(postID)/stars/\(user.uid)": star,
                "user-posts/\(post.author.uid)/\(postID)/starCount": DatabaseValue(count),
                "user-posts/\(post.author.uid)/\(postID)/stars/\(user.uid)": star,
                "likes/\(postID)/\(user.uid)": liked ? .null : .serverTimestamp,
            ]
            updates.merge(try ActivityNotification.updates(to: post.author.uid, .like, by: me, post: postID, undo: liked)) { $1 }
            do {
                try await client.settle(root.updateChildValues(updates))
                return (!liked, count)
            } catch let error as HearthClientError where error.kind == .permissionDenied && attempt < attempts {
                // Someone else liked in between: the count moved; read it again.
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...40)))
            }
        }
        throw SocialError.failed("Too many people at once. Try again.")
    }

    func setSaved(_ saved: Bool, postID: String) async throws {
        let user = try client.requireUser()
        let entry = root.child("saved/\(user.uid)/\(postID)")
        try await client.settle(saved ? entry.setValue(.serverTimestamp) : entry.removeValue())
    }

    func report(_ postID: String) async throws {
        let user = try client.requireUser()
        try await client.settle(root.child("postFlags/\(postID)/\(user.uid)").setValue(true))
    }

    func report(comment: String, on postID: String) async throws {
        let user = try client.requireUser()
        try await client.settle(root.child("commentFlags/\(postID)/\(comment)/\(user.uid)").setValue(true))
    }

    /// Deletes one's own post with everything that hangs off it: the post, its copy, comments,
    /// likes, hashtags, the author's index, feed entries and notifications about it (one
    /// write), then its files.
    func delete(_ post: Post) async throws {
        let user = try client.requireUser()
        guard user.uid == post.author.uid else { throw SocialError.denied("Only its author can delete a post.") }
        var updates: [String: DatabaseValue] = [
            "posts/\(post.id)": nil, "user-posts/\(post.author.uid)/\(post.id)": nil, "comments/\(post.id)": nil,
            "likes/\(post.id)": nil, "people/\(post.author.uid)/posts/\(post.id)": nil, "feed/\(post.author.uid)/\(post.id)": nil,
        ]
        for tag in post.hashtags { updates["hashtags/\(tag)/\(post.id)"] = .null }
        // The author's notifications about it go too.
        for liker in post.stars.keys {
            updates[ActivityNotification.path(to: user.uid, .like, from: liker, post: post.id)] = .null
        }
        for comment in try await root.child("comments/\(post.id)").getData().childKeys {
            updates[ActivityNotification.path(to: user.uid, .comment, from: "", comment: comment)] = .null
        }
        try await client.settle(root.updateChildValues(updates))
        // Files go after the data, so a failure here leaves no post pointing at nothing.
        await client.storage.removeFiles(of: post.photos)
    }

    /// A link to the post on this server's web app.
    func shareLink(_ postID: String) -> URL {
        // The web app served at the server's root routes by fragment.
        URL(string: "#/post/\(postID)", relativeTo: client.url.appendingPathComponent(""))!.absoluteURL
    }
}
