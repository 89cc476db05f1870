import HearthCore

/// Everything a person made in the social app, taken away after their account is deleted, and
/// everything of other people's left consistent (counts, both shapes of a like, the mirrors of
/// follows and blocks): the server side of "Delete my account", FriendlyPix's `deleteUser`.
///
/// What goes: the profile; their posts with every copy, index entry and pointer (feeds, saved
/// lists, hashtags, reports and the moderation queue) and what hangs off them (comments,
/// likes), as ``PostRemoval`` removes a post; their photos and avatars in storage; their
/// comments (with their reports and moderated originals), likes and stars elsewhere (the
/// counts moved back); the mentions of them; their own reports; admin requests they made or
/// that name them; follows and blocks in both directions; their notifications, sent and
/// received; their presence and push subscriptions; and their conversations, both members'
/// messages (a conversation is kept under both members' IDs, so it cannot outlive one of them:
/// the other member sees it go). What stays: other people's own content, including text that
/// named them ("@Name").
///
/// A run reads the newest data at every step and finds the work again from it, so it can stop
/// anywhere (a crash, a timeout) and be run again: it finishes what is left. Pointers are
/// removed together with what they point at, and the lists later steps read (the profile's
/// posts and follows) go last. A like is taken back with a conditional write, so a concurrent
/// like of the same post is never lost from the count.
public struct AccountCleanup: Sendable {
    let data: any SocialData
    let files: any SocialFiles
    /// Paths in one write, at most.
    let chunkSize: Int

    public init(data: any SocialData, files: any SocialFiles, chunkSize: Int = 500) {
        self.data = data
        self.files = files
        self.chunkSize = chunkSize
    }

    /// What a run removed, for the log.
    public struct Report: Sendable, Equatable {
        public var posts = 0
        public var likes = 0
        public var comments = 0
        public var conversations = 0
        public var files = 0
        /// Paths deleted or changed in all.
        public var paths = 0
    }

    /// Removes `uid`'s data.
    @discardableResult
    public func run(uid: String) async throws -> Report {
        var report = Report()
        // Hidden from search and from new mentions first.
        var first = SocialChanges()
        for field in ["full_name", "_search_index", "bio", "profile_picture"] { first.delete(.of("people", uid, field)) }
        first.delete(.of("status", uid))
        try await apply(first, to: &report)

        report.posts = try await removePosts(of: uid, report: &report)
        report.likes = try await takeBackLikes(of: uid, report: &report)
        report.comments = try await removeComments(of: uid, report: &report)
        try await removeFollowsAndBlocks(of: uid, report: &report)
        report.conversations = try await removeConversations(of: uid, report: &report)
        try await removeNotifications(from: uid, report: &report)

        var own = SocialChanges()
        for root in [
            "notifications", "notificationSettings", "pushSubscriptions", "saved", "feed", "user-chats", "status", "blocking", "blocked",
            "followers", "admins", "suspended", "user-posts", "people",
        ] {
            own.delete(.of(root, uid))
        }
        try await apply(own, to: &report)
        // Photos of posts and avatars: every name under the person's folder.
        report.files = try await files.deleteAll(under: "\(uid)/")
        return report
    }

    // MARK: - Posts

    /// The person's posts (found from the post index, their copies and their profile's list,
    /// so an orphan of any of them is found too) with everything that points at them.
    private func removePosts(of uid: String, report: inout Report) async throws -> Int {
        let posts = try await data.value(at: .of("posts"))
        var ids = Set(posts.entries.filter { $0.value.at("author", "uid").string == uid }.map(\.key))
        ids.formUnion(try await data.value(at: .of("user-posts", uid)).keys)
        ids.formUnion(try await data.value(at: .of("people", uid, "posts")).keys)
        guard !ids.isEmpty else { return 0 }
        let changes = try await PostRemoval(data: data, files: files).changes(removing: Dictionary(uniqueKeysWithValues: ids.map { ($0, uid) }))
        try await apply(changes, to: &report)
        return ids.count
    }

    // MARK: - Likes

    /// The person's likes and stars on other people's posts, taken back as the app's unlike
    /// does: the star, the like, the copy's star and the notification go, and both copies'
    /// counts move down by one, only while the count is still the one read.
    private func takeBackLikes(of uid: String, report: inout Report) async throws -> Int {
        var taken = 0
        var strays = SocialChanges()
        let likes = try await data.value(at: .of("likes"))
        let copies = try await data.value(at: .of("user-posts"))
        var liked = Set(try await data.value(at: .of("posts")).entries.filter { !$0.value.at("stars", uid).isNull }.map(\.key))
        liked.formUnion(likes.entries.filter { !$0.value.at(uid).isNull }.map(\.key))
        for (author, posts) in copies.entries {
            for (id, copy) in posts.entries where !copy.at("stars", uid).isNull {
                liked.insert(id)
                // A copy whose post is gone keeps nothing to count.
                strays.delete(.of("user-posts", author, id, "stars", uid))
            }
        }
        for id in liked.sorted() {
            if try await unlike(id, as: uid, report: &report) { taken += 1 }
        }
        // What is left (a like with no star, or a copy's star with no post) moves no count.
        for (id, users) in likes.entries where !users.at(uid).isNull { strays.delete(.of("likes", id, uid)) }
        var remaining = SocialChanges()
        for (path, _) in strays.values where !(try await data.value(at: path)).isNull { remaining.delete(path) }
        try await apply(remaining, to: &report)
        return taken
    }

    /// Takes back one star, retrying while other likes move the count; false when there was none.
    private func unlike(_ id: String, as uid: String, report: inout Report) async throws -> Bool {
        while true {
            let post = try await data.value(at: .of("posts", id))
            guard !post.at("stars", uid).isNull else { return false }
            let count = post.at("starCount")
            let author = post.at("author", "uid").string
            var changes = SocialChanges()
            changes.delete(.of("posts", id, "stars", uid))
            changes.delete(.of("likes", id, uid))
            var expecting: [Path: Node] = [.of("posts", id, "starCount"): count]
            if let value = count.integerValue {
                changes.set(.of("posts", id, "starCount"), .int(max(0, value - 1)))
            }
            if let author {
                let copy = Path.of("user-posts", author, id)
                let copyCount = try await data.value(at: copy.with("starCount"))
                expecting[copy.with("starCount")] = copyCount
                if !copyCount.isNull, let value = count.integerValue { changes.set(copy.with("starCount"), .int(max(0, value - 1))) }
                changes.delete(copy.with("stars", uid))
                changes.delete(.of("notifications", author, "like_\(id)_\(uid)"))
            }
            do {
                try await data.update(changes.values, expecting: expecting)
                report.paths += changes.count
                return true
            } catch is SocialDataConflict {
                continue  // someone liked or unliked meanwhile: read again
            }
        }
    }

    // MARK: - Comments and mentions

    /// The person's comments (with the notifications they made) and the mentions of them in
    /// other people's posts and comments.
    private func removeComments(of uid: String, report: inout Report) async throws -> Int {
        var changes = SocialChanges()
        var removed = 0
        let posts = try await data.value(at: .of("posts"))
        for (postID, comments) in try await data.value(at: .of("comments")).entries {
            let author = posts.at(postID, "author", "uid").string
            for (commentID, comment) in comments.entries {
                if comment.at("author", "uid").string == uid {
                    for root in ["comments", "commentFlags"] { changes.delete(.of(root, postID, commentID)) }
                    changes.delete(.of("reports", "comments", postID, commentID))
                    changes.delete(.of("moderated", "comments", postID, commentID))
                    if let author { changes.delete(.of("notifications", author, "comment_\(commentID)")) }
                    removed += 1
                } else if !comment.at("mentions", uid).isNull {
                    changes.delete(.of("comments", postID, commentID, "mentions", uid))
                }
            }
        }
        for (postID, post) in posts.entries where !post.at("mentions", uid).isNull {
            changes.delete(.of("posts", postID, "mentions", uid))
            if let author = post.at("author", "uid").string { changes.delete(.of("user-posts", author, postID, "mentions", uid)) }
        }
        for (author, copies) in try await data.value(at: .of("user-posts")).entries {
            for (postID, copy) in copies.entries where !copy.at("mentions", uid).isNull {
                changes.delete(.of("user-posts", author, postID, "mentions", uid))
            }
        }
        try await apply(changes, to: &report)
        return removed
    }

    // MARK: - Follows and blocks

    /// Both sides of every follow and block, in both directions, with the follow notifications.
    private func removeFollowsAndBlocks(of uid: String, report: inout Report) async throws {
        var changes = SocialChanges()
        let followers = try await data.value(at: .of("followers"))
        var followed = Set(try await data.value(at: .of("people", uid, "following")).keys)
        followed.formUnion(followers.entries.filter { !$0.value.at(uid).isNull }.map(\.key))
        for other in followed {
            changes.delete(.of("followers", other, uid))
            changes.delete(.of("people", uid, "following", other))
            changes.delete(.of("notifications", other, "follow_\(uid)"))
        }
        var following = Set(followers.at(uid).keys)
        following.formUnion(try await data.value(at: .of("people")).entries.filter { !$0.value.at("following", uid).isNull }.map(\.key))
        for other in following {
            changes.delete(.of("people", other, "following", uid))
            changes.delete(.of("followers", uid, other))
        }
        for (mine, theirs) in [("blocking", "blocked"), ("blocked", "blocking")] {
            let all = try await data.value(at: .of(mine))
            var others = Set(all.at(uid).keys)
            others.formUnion(try await data.value(at: .of(theirs)).entries.filter { !$0.value.at(uid).isNull }.map(\.key))
            for other in others {
                changes.delete(.of(mine, uid, other))
                changes.delete(.of(theirs, other, uid))
            }
        }
        // The person's reports of other people's posts and comments.
        for (postID, reporters) in try await data.value(at: .of("postFlags")).entries where !reporters.at(uid).isNull {
            changes.delete(.of("postFlags", postID, uid))
        }
        for (postID, comments) in try await data.value(at: .of("commentFlags")).entries {
            for (commentID, reporters) in comments.entries where !reporters.at(uid).isNull {
                changes.delete(.of("commentFlags", postID, commentID, uid))
            }
        }
        // Requests an admin made or that name the person (normally carried out and gone already).
        for (id, request) in try await data.value(at: .of("adminRequests")).entries
        where request.at("by").string == uid || request.at("uid").string == uid {
            changes.delete(.of("adminRequests", id))
        }
        try await apply(changes, to: &report)
    }

    // MARK: - Conversations

    /// Every conversation the person is a member of: its messages and both members' entries.
    private func removeConversations(of uid: String, report: inout Report) async throws -> Int {
        var changes = SocialChanges()
        var conversations = Set(try await data.value(at: .of("user-chats", uid)).keys)
        for id in try await data.value(at: .of("messages")).keys where Self.isMember(uid, of: id) { conversations.insert(id) }
        for (owner, chats) in try await data.value(at: .of("user-chats")).entries {
            for (id, chat) in chats.entries where chat.at("with").string == uid || Self.isMember(uid, of: id) {
                conversations.insert(id)
                changes.delete(.of("user-chats", owner, id))
            }
        }
        for id in conversations {
            changes.delete(.of("messages", id))
            changes.delete(.of("user-chats", uid, id))
            if let other = Self.otherMember(of: id, than: uid) { changes.delete(.of("user-chats", other, id)) }
        }
        try await apply(changes, to: &report)
        return conversations.count
    }

    /// Conversation IDs are `{smaller uid}_{larger uid}`.
    static func isMember(_ uid: String, of conversation: String) -> Bool {
        conversation.hasPrefix("\(uid)_") || conversation.hasSuffix("_\(uid)")
    }

    static func otherMember(of conversation: String, than uid: String) -> String? {
        if conversation.hasPrefix("\(uid)_") { return String(conversation.dropFirst(uid.count + 1)) }
        if conversation.hasSuffix("_\(uid)") { return String(conversation.dropLast(uid.count + 1)) }
        return nil
    }

    // MARK: - Notifications

    /// What the person caused in other people's inboxes that the steps above did not reach.
    private func removeNotifications(from uid: String, report: inout Report) async throws {
        var changes = SocialChanges()
        for (owner, inbox) in try await data.value(at: .of("notifications")).entries where owner != uid {
            for (id, notification) in inbox.entries where notification.at("from").string == uid { changes.delete(.of("notifications", owner, id)) }
        }
        try await apply(changes, to: &report)
    }

    private func apply(_ changes: SocialChanges, to report: inout Report) async throws {
        for chunk in changes.chunks(of: chunkSize) {
            try await data.update(chunk)
            report.paths += chunk.count
        }
    }
}
