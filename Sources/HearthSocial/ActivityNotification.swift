import Foundation
import HearthClient

/// Something someone did that concerns a person: liked their post, commented on it, followed
/// them, or named them in a post or comment. Stored at `notifications/{recipient}/{id}`,
/// written by the one who did it in the same write as the like, comment or follow (the rules
/// check that it exists) — a mention by the server, from the post's or comment's names — under
/// one ID per thing reported so repeating it makes no second notification.
public struct ActivityNotification: Codable, Equatable, Identifiable, Sendable {
    public enum Kind: String, Codable, Sendable {
        case like, comment, follow, mention
    }

    public var id: String = ""
    public var type: Kind
    /// Who did it.
    public var from: String
    /// Their name (their token's, as the rules require).
    public var name: String
    public var post: String?
    public var comment: String?
    public var timestamp: ServerTimestamp
    public var read: Bool

    public init(
        id: String = "", type: Kind, from: String, name: String, post: String? = nil, comment: String? = nil,
        timestamp: ServerTimestamp = .server, read: Bool = false
    ) {
        self.id = id
        self.type = type
        self.from = from
        self.name = name
        self.post = post
        self.comment = comment
        self.timestamp = timestamp
        self.read = read
    }

    enum CodingKeys: String, CodingKey {
        case type, from, name, post, comment, timestamp, read
    }

    /// The notification's ID: `like_{postId}_{from}`, `comment_{commentId}`, `follow_{from}`, or
    /// `mention_{commentId}` (`mention_{postId}` for a post).
    public static func id(_ type: Kind, from: String, post: String? = nil, comment: String? = nil) -> String {
        switch type {
        case .like: "like_\(post ?? "")_\(from)"
        case .comment: "comment_\(comment ?? "")"
        case .follow: "follow_\(from)"
        case .mention: "mention_\(comment ?? post ?? "")"
        }
    }

    /// The path of the notification telling `recipient` about it.
    public static func path(to recipient: String, _ type: Kind, from: String, post: String? = nil, comment: String? = nil) -> String {
        "notifications/\(recipient)/\(id(type, from: from, post: post, comment: comment))"
    }

    /// The entries of a multi-path update that tell `recipient` what `author` did (or, with
    /// `undo`, take it back); none when they are the same person.
    static func updates(
        to recipient: String, _ type: Kind, by author: Author, post: String? = nil, comment: String? = nil, undo: Bool = false
    ) throws -> [String: DatabaseValue] {
        guard recipient != author.uid else { return [:] }
        let path = path(to: recipient, type, from: author.uid, post: post, comment: comment)
        if undo { return [path: .null] }
        let notification = ActivityNotification(type: type, from: author.uid, name: author.fullName, post: post, comment: comment)
        return [path: try DatabaseValue.encoding(notification)]
    }
}

extension ActivityNotification: KeyedModel {}
