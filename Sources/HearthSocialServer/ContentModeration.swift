import HearthCore

/// Moderates posts and comments after they are written, as FriendlyPix's functions do: the
/// text is replaced with what ``TextModeration`` makes of it and the item is marked
/// `moderated`, while the original is kept under `moderated/` where only admins read it.
///
/// A post's two copies change together. A moderated comment its author edits again is judged
/// anew: moderated again, or unmarked when the new text needs nothing. Every write is
/// conditional on the text still being the one judged, so an edit made meanwhile wins and is
/// judged at its own event.
struct ContentModeration: Sendable {
    let data: any SocialData
    let moderation: TextModeration

    /// Moderates the post `id`, if it needs it.
    func moderatePost(_ id: String) async throws {
        let post = try await data.value(at: .of("posts", id))
        guard let title = post.at("title").string, let body = post.at("body").string else { return }
        let (newTitle, newBody) = (moderation.moderate(title), moderation.moderate(body))
        guard newTitle.moderated || newBody.moderated else { return }
        var changes = SocialChanges()
        var places = [Path.of("posts", id)]
        if let author = post.at("author", "uid").string, !(try await data.value(at: .of("user-posts", author, id))).isNull {
            places.append(.of("user-posts", author, id))
        }
        for place in places {
            changes.set(place.with("title"), .string(newTitle.text))
            changes.set(place.with("body"), .string(newBody.text))
            changes.set(place.with("moderated"), .bool(true))
        }
        changes.set(.of("moderated", "posts", id), .object([(ChildKey("title"), .string(title)), (ChildKey("body"), .string(body))]))
        try await update(changes, expecting: [.of("posts", id, "title"): .string(title), .of("posts", id, "body"): .string(body)])
    }

    /// Moderates the comment `comment` on post `post`, if it needs it.
    func moderateComment(post: String, comment: String) async throws {
        let path = Path.of("comments", post, comment)
        let value = try await data.value(at: path)
        guard let text = value.at("text").string else { return }
        let outcome = moderation.moderate(text)
        var changes = SocialChanges()
        let original = Path.of("moderated", "comments", post, comment)
        if outcome.moderated {
            changes.set(path.with("text"), .string(outcome.text))
            changes.set(path.with("moderated"), .bool(true))
            changes.set(original, .object([(ChildKey("text"), .string(text))]))
        } else if !value.at("moderated").isNull {
            // Our own moderated text, or an edit that needs nothing (then it is no longer moderated).
            let kept = try await data.value(at: original.with("text")).string
            if let kept, moderation.moderate(kept).text == text { return }
            changes.delete(path.with("moderated"))
            changes.delete(original)
        } else {
            return
        }
        try await update(changes, expecting: [path.with("text"): .string(text)])
    }

    private func update(_ changes: SocialChanges, expecting: [Path: Node]) async throws {
        do {
            try await data.update(changes.values, expecting: expecting)
        } catch is SocialDataConflict {
            // Edited or deleted meanwhile: that change has its own event, judged then.
        }
    }
}
