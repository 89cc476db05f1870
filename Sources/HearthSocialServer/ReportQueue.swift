import HearthCore

/// The moderation queue admins read: one entry per reported post (`reports/posts/{postId}`) or
/// comment (`reports/comments/{postId}/{commentId}`) with how many people reported it, whose it
/// is and what it says, kept in step with the reports (`postFlags/`, `commentFlags/`) and with
/// what was reported (an entry goes when the item or its last report goes).
///
/// Reporters are not named in the queue: a report stays between its reporter and the server.
struct ReportQueue: Sendable {
    let data: any SocialData
    let now: @Sendable () -> Int64

    /// Sets the entry of post `id` from its reports.
    func recountPost(_ id: String) async throws {
        let post = try await data.value(at: .of("posts", id))
        let count = try await data.value(at: .of("postFlags", id)).childCount
        let entry = Path.of("reports", "posts", id)
        guard count > 0, let author = post.at("author", "uid").string else { return try await data.update([entry: .null]) }
        try await data.update([entry: Self.entry(count: count, author: author, text: post.at("title").string ?? "", at: now())])
    }

    /// Sets the entry of comment `comment` on post `post` from its reports.
    func recountComment(post: String, comment: String) async throws {
        let value = try await data.value(at: .of("comments", post, comment))
        let count = try await data.value(at: .of("commentFlags", post, comment)).childCount
        let entry = Path.of("reports", "comments", post, comment)
        guard count > 0, let author = value.at("author", "uid").string else { return try await data.update([entry: .null]) }
        try await data.update([entry: Self.entry(count: count, author: author, text: value.at("text").string ?? "", at: now())])
    }

    static func entry(count: Int, author: String, text: String, at time: Int64) -> Node {
        .object([
            (ChildKey("author"), .string(author)), (ChildKey("count"), .int(Int64(count))),
            (ChildKey("text"), .string(String(text.prefix(200)))), (ChildKey("updated"), .int(time)),
        ])
    }
}
