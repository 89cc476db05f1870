import Foundation
import HearthClient
import Observation

/// One post, live: its comments, likes and saved state, and what its reader can do with it
/// (comment, edit or delete their own comments, like, save, share, report, and delete it if
/// it is theirs).
@MainActor
@Observable
public final class PostDetailViewModel {
    public let postID: String
    /// Nil until loaded, and after the post is deleted.
    public private(set) var post: Post?
    /// Oldest first.
    public private(set) var comments: [Comment] = []
    /// Who likes the post, earliest first (FriendlyPix's `likes/`, written with the stars).
    public private(set) var likes: [Like] = []
    public private(set) var isSaved = false
    public private(set) var isDeleted = false
    public private(set) var errorMessage: String?

    public var newComment = ""

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []

    public init(client: SocialClient, postID: String) {
        self.client = client
        self.postID = postID
    }

    isolated deinit {
        for listener in listeners { listener.cancel() }
    }

    /// The reader likes the post (one like, kept in both data shapes: read from the post's stars).
    public var isLiked: Bool { post?.isStarred(by: client.uid) ?? false }
    /// How many like it (the post's `starCount`, which moves with `likes/`).
    public var likeCount: Int { post?.starCount ?? 0 }
    /// True when the reader wrote the post.
    public var isOwn: Bool { post != nil && post?.author.uid == client.uid }
    /// A link to the post in the web app.
    public var shareLink: URL { PostActions(client: client).shareLink(postID) }

    public func isOwn(_ comment: Comment) -> Bool { comment.author.uid == client.uid }

    /// Starts listening to the post, its comments, its likes and the reader's saved entry.
    public func start() {
        stop()
        let root = client.database.root
        listeners.append(listen(root.child("posts/\(postID)").query) { model, snapshot in
            model.post = snapshot.decoded(Post.self)
            if !snapshot.exists, model.post == nil { model.isDeleted = true }
        })
        listeners.append(listen(root.child("comments/\(postID)").queryOrderedByKey()) { model, snapshot in
            model.comments = snapshot.children.compactMap { $0.decoded(Comment.self) }
        })
        listeners.append(listen(root.child("likes/\(postID)").query) { model, snapshot in
            model.likes = Like.all(of: model.postID, in: snapshot)
        })
        if let uid = client.uid {
            listeners.append(listen(root.child("saved/\(uid)/\(postID)").query) { model, snapshot in
                model.isSaved = snapshot.exists
            })
        }
    }

    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
    }

    private func listen(_ query: DatabaseQuery, _ show: @escaping @MainActor (PostDetailViewModel, DataSnapshot) -> Void) -> Task<Void, Never> {
        watchValue(query, for: self, show: show) { model, message in
            model.errorMessage = message
        }
    }

    // MARK: - Comments

    /// Adds ``newComment`` as the reader's comment.
    public func addComment() async {
        let text = newComment.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return errorMessage = "Write something first." }
        guard text.count <= Comment.maxLength else { return errorMessage = "The comment is too long." }
        await perform {
            guard let author = self.client.author else { throw SocialError.notSignedIn }
            let root = self.client.database.root
            let id = root.child("comments/\(self.postID)").childByAutoId().key ?? ""
            var updates: [String: DatabaseValue] = ["comments/\(self.postID)/\(id)": try DatabaseValue.encoding(Comment(author: author, text: text))]
            // The post's author hears of it in the same write.
            if let postAuthor = try await self.postAuthor() {
                updates.merge(try ActivityNotification.updates(to: postAuthor, .comment, by: author, post: self.postID, comment: id)) { $1 }
            }
            let write = root.updateChildValues(updates)
            self.newComment = ""
            try await self.client.settle(write)
        }
    }

    /// Changes the text of one of the reader's own comments; the people it named stay recorded
    /// only while their "@Full Name" is still in the text.
    public func editComment(_ comment: Comment, text: String) async {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= Comment.maxLength else { return errorMessage = "Write 1 to 2000 characters." }
        let kept = comment.mentions(keptIn: trimmed)
        await perform {
            try await self.client.settle(self.client.database.root.child("comments/\(self.postID)/\(comment.id)").updateChildValues([
                "text": DatabaseValue(trimmed), "timestamp": .serverTimestamp,
                "mentions": kept.isEmpty ? .null : try .encoding(kept),
            ]))
        }
    }

    /// Deletes one of the reader's own comments, with its notification.
    public func deleteComment(_ comment: Comment) async {
        await perform {
            var updates: [String: DatabaseValue] = ["comments/\(self.postID)/\(comment.id)": .null]
            if let postAuthor = try await self.postAuthor(), let me = self.client.author {
                updates.merge(try ActivityNotification.updates(to: postAuthor, .comment, by: me, post: self.postID, comment: comment.id, undo: true)) { $1 }
            }
            try await self.client.settle(self.client.database.root.updateChildValues(updates))
        }
    }

    /// The post's author: from the post shown, or read once.
    private func postAuthor() async throws -> String? {
        if let post { return post.author.uid }
        return try await client.database.root.child("posts/\(postID)/author/uid").getData().string
    }

    // MARK: - Likes, saving, reporting, deleting

    /// Likes or unlikes the post: one write to `posts/`, `user-posts/` and `likes/` (a
    /// transaction on the count), with the author's notification.
    public func toggleLike() async {
        await perform { try await PostActions(client: self.client).toggleLike(self.postID) }
    }

    public func toggleSaved() async {
        let saved = !isSaved
        await perform { try await PostActions(client: self.client).setSaved(saved, postID: self.postID) }
    }

    /// Reports the post to the admins (once per reader).
    public func report() async {
        await perform { try await PostActions(client: self.client).report(self.postID) }
    }

    /// Reports a comment to the admins (once per reader).
    public func report(_ comment: Comment) async {
        await perform { try await PostActions(client: self.client).report(comment: comment.id, on: self.postID) }
    }

    /// Deletes the reader's own post with its comments, likes, index entries and photos.
    public func deletePost() async {
        guard let post else { return }
        await perform {
            try await PostActions(client: self.client).delete(post)
            self.isDeleted = true
        }
    }

    private func perform(_ work: @escaping () async throws -> Void) async {
        errorMessage = nil
        do {
            try await work()
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }
}
