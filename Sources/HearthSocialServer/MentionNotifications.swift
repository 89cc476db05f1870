import HearthCore

/// Tells the people a post or comment names ("@Full Name", recorded in its `mentions`) in
/// their notifications, as the app tells of likes and follows: one notification per post or
/// comment (`mention_{id}`), from its author, unless the person named is its author or blocked
/// them. A name an edit took out takes its notification back; so does the comment's deletion.
struct MentionNotifications: Sendable {
    let data: any SocialData
    let now: @Sendable () -> Int64

    /// Brings the notifications about `item` (a post, or a comment on `post`) in line with who
    /// it names now (`before` is who it named, for an edit or a deletion).
    func update(post: String, comment: String?, before: Node, after: Node) async throws {
        let id = "mention_\(comment ?? post)"
        let named = Set(after.at("mentions").keys)
        var changes = SocialChanges()
        for uid in Set(before.at("mentions").keys).subtracting(named) { changes.delete(.of("notifications", uid, id)) }
        if let author = after.at("author", "uid").string {
            for uid in named where uid != author {
                let notification = Path.of("notifications", uid, id)
                guard try await data.value(at: notification).isNull,
                    try await data.value(at: .of("blocking", uid, author)).isNull
                else { continue }
                var fields: [(ChildKey, Node)] = [
                    (ChildKey("type"), .string("mention")), (ChildKey("from"), .string(author)),
                    (ChildKey("name"), .string(after.at("author", "full_name").string ?? "Someone")), (ChildKey("post"), .string(post)),
                    (ChildKey("timestamp"), .int(now())), (ChildKey("read"), .bool(false)),
                ]
                if let comment { fields.append((ChildKey("comment"), .string(comment))) }
                changes.set(notification, .object(fields))
            }
        }
        guard !changes.isEmpty else { return }
        try await data.update(changes.values)
    }
}
