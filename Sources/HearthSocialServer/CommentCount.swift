import HearthCore

/// Keeps a post's `commentCount` (in `posts/{id}` and its author's copy in `user-posts/`) equal
/// to the number of its comments, so a list of posts shows them with no listener per card.
/// Only the server writes it (the rules give clients no `commentCount`).
///
/// Recounted from `comments/{id}` at each comment added or removed, so a missed or repeated
/// event corrects itself. The count is read before the comments and written only while it is
/// unchanged: of two recounts racing, the one that read fewer comments loses and reads again.
/// No count is written for a post that is gone (the write also expects its author).
struct CommentCount: Sendable {
    let data: any SocialData

    /// Attempts before giving up to a flood of comments (the next comment recounts anyway).
    static let attempts = 8

    func recount(post id: String) async throws {
        for _ in 0..<Self.attempts {
            let post = try await data.value(at: .of("posts", id))
            guard let author = post.at("author", "uid").string else { return }
            let current = post.at("commentCount")
            let comments = try await data.value(at: .of("comments", id))
            let count = comments.keys.count
            let counted: Node = count == 0 ? .null : .int(Int64(count))
            if current.unprioritized == counted { return }
            var values: [Path: Node] = [.of("posts", id, "commentCount"): counted]
            let copy = Path.of("user-posts", author, id)
            if !(try await data.value(at: copy.with("author"))).isNull { values[copy.with("commentCount")] = counted }
            do {
                try await data.update(values, expecting: [.of("posts", id, "commentCount"): current, .of("posts", id, "author", "uid"): .string(author)])
                return
            } catch is SocialDataConflict {
                continue
            }
        }
    }

    /// Recounts every post with comments and no count (the data of a server from before the
    /// count, or comments written while the server side was not running).
    func countUncounted() async throws {
        for id in try await data.value(at: .of("comments")).keys {
            guard try await data.value(at: .of("posts", id, "commentCount")).isNull else { continue }
            try await recount(post: id)
        }
    }
}
