import HearthCore

/// What admins ask of the server, one request at a time (`adminRequests/{id}`, which the rules
/// let only admins create, and only for something that exists): remove a post or a comment with
/// everything pointing at it, dismiss an item's reports, suspend or reinstate an account. The
/// server carries a request out with its own authority, then deletes it.
struct AdminRequests: Sendable {
    let data: any SocialData
    let files: any SocialFiles
    let accounts: (any SocialAccounts)?

    /// What a request asks for.
    enum Action: Equatable {
        case removePost(String)
        case removeComment(post: String, comment: String)
        case dismiss(post: String, comment: String?)
        case suspend(String)
        case reinstate(String)

        init?(_ request: Node) {
            let post = request.at("post").string
            switch request.at("action").string {
            case "removePost": guard let post else { return nil }; self = .removePost(post)
            case "removeComment":
                guard let post, let comment = request.at("comment").string else { return nil }
                self = .removeComment(post: post, comment: comment)
            case "dismiss": guard let post else { return nil }; self = .dismiss(post: post, comment: request.at("comment").string)
            case "suspend": guard let uid = request.at("uid").string else { return nil }; self = .suspend(uid)
            case "reinstate": guard let uid = request.at("uid").string else { return nil }; self = .reinstate(uid)
            default: return nil
            }
        }
    }

    /// Carries out the request `id` (nothing when it is gone: already done) and deletes it.
    func run(_ id: String) async throws {
        let path = Path.of("adminRequests", id)
        let request = try await data.value(at: path)
        guard !request.isNull else { return }
        if let action = Action(request) { try await perform(action) }
        try await data.update([path: .null])
    }

    func perform(_ action: Action) async throws {
        switch action {
        case .removePost(let id):
            let post = try await data.value(at: .of("posts", id))
            guard let author = post.at("author", "uid").string else { return }
            let removal = PostRemoval(data: data, files: files)
            for chunk in try await removal.changes(removing: [id: author]).chunks(of: 500) { try await data.update(chunk) }
            _ = try await removal.deletePhotos(of: [id: author])
        case .removeComment(let post, let comment):
            var changes = SocialChanges()
            for path in [
                Path.of("comments", post, comment), .of("commentFlags", post, comment), .of("reports", "comments", post, comment),
                .of("moderated", "comments", post, comment),
            ] {
                changes.delete(path)
            }
            if let author = try await data.value(at: .of("posts", post, "author", "uid")).string {
                changes.delete(.of("notifications", author, "comment_\(comment)"))
            }
            try await data.update(changes.values)
        case .dismiss(let post, let comment?):
            try await data.update([.of("commentFlags", post, comment): .null, .of("reports", "comments", post, comment): .null])
        case .dismiss(let post, nil):
            try await data.update([.of("postFlags", post): .null, .of("reports", "posts", post): .null])
        case .suspend(let uid):
            // Marked first: the rules refuse the account's writes from then on, whatever token it holds.
            try await data.update([.of("suspended", uid): .bool(true)])
            _ = try await accounts?.setDisabled(true, uid: uid)
        case .reinstate(let uid):
            _ = try await accounts?.setDisabled(false, uid: uid)
            try await data.update([.of("suspended", uid): .null])
        }
    }
}
