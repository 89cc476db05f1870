import HearthCore

/// Takes posts away with everything that hangs off them or points at them: both copies, the
/// author's index entry, comments, likes, reports and the moderation queue's entries, the
/// originals moderation kept, other people's feed, saved and hashtag entries, the author's
/// notifications about them, and their photos. Used when an account is deleted, when an admin
/// removes a post, and by the retention job.
///
/// Found again from the data at each run, so a removal cut short is finished by the next.
struct PostRemoval: Sendable {
    let data: any SocialData
    let files: any SocialFiles

    /// The changes that remove `posts` (post ID → author uid), read from the newest data.
    func changes(removing posts: [String: String]) async throws -> SocialChanges {
        var changes = SocialChanges()
        guard !posts.isEmpty else { return changes }
        for (id, author) in posts {
            for path in [
                Path.of("posts", id), .of("user-posts", author, id), .of("people", author, "posts", id), .of("comments", id), .of("likes", id),
                .of("postFlags", id), .of("commentFlags", id), .of("reports", "posts", id), .of("reports", "comments", id), .of("moderated", "posts", id),
                .of("moderated", "comments", id),
            ] {
                changes.delete(path)
            }
        }
        // Notifications about them: the author's (likes, comments) and the mentions' in other inboxes.
        for (owner, inbox) in try await data.value(at: .of("notifications")).entries {
            for (key, notification) in inbox.entries where notification.at("post").string.map({ posts[$0] != nil }) ?? false {
                changes.delete(.of("notifications", owner, key))
            }
        }
        // Other people's pointers: feeds, saved lists, the hashtag index.
        for root in ["feed", "saved", "hashtags"] {
            for (owner, entries) in try await data.value(at: .of(root)).entries {
                for id in entries.keys where posts[id] != nil { changes.delete(.of(root, owner, id)) }
            }
        }
        return changes
    }

    /// Deletes the posts' photos: everything stored in their folders (the rules keep a post's
    /// photos there).
    func deletePhotos(of posts: [String: String]) async throws -> Int {
        var deleted = 0
        for (id, author) in posts {
            deleted += try await files.deleteAll(under: "\(author)/full/\(id)/")
            deleted += try await files.deleteAll(under: "\(author)/thumb/\(id)/")
        }
        return deleted
    }
}
