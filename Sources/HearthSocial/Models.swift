import Foundation
import HearthClient

// The social app's data, as stored at the paths of the reference designs:
//
// | Path | Model |
// |---|---|
// | `people/{uid}` | ``Profile`` |
// | `posts/{postId}`, copied at `user-posts/{uid}/{postId}` | ``Post`` |
// | `comments/{postId}/{commentId}` | ``Comment`` |
// | `likes/{postId}/{uid}` | server time (FriendlyPix's likes) |
// | `followers/{uid}/{followerUid}`, `people/{uid}/following/{followedUid}` | `true` |
// | `feed/{uid}/{postId}` | `true` (the home feed, filled lazily) |
// | `saved/{uid}/{postId}` | server time |
// | `hashtags/{tag}/{postId}` | `true` |
// | `blocking/{uid}/{blockedUid}`, `blocked/{blockedUid}/{uid}` | `true` |
// | `postFlags/{postId}/{uid}` | `true` (reports) |
// | `user-chats/{uid}/{conversationId}` | ``ConversationSummary`` |
// | `messages/{conversationId}/{messageId}` | ``Message`` |
//
// Photos live in file storage at `{uid}/full/{postId}/{n}.jpg` and `{uid}/thumb/{postId}/{n}.jpg`.

/// Who wrote a post or comment, as stored with it.
public struct Author: Codable, Equatable, Hashable, Sendable {
    public var uid: String
    /// The author's name when they wrote it (their token's name, or "Anonymous").
    public var fullName: String
    public var profilePicture: String?

    public init(uid: String, fullName: String, profilePicture: String? = nil) {
        self.uid = uid
        self.fullName = fullName
        self.profilePicture = profilePicture
    }

    /// The signed-in `user` as an author: their token's name, or "Anonymous" (the name the rules
    /// accept).
    init(user: User) {
        self.init(uid: user.uid, fullName: user.displayName ?? "Anonymous", profilePicture: user.photoURL)
    }

    enum CodingKeys: String, CodingKey {
        case uid
        case fullName = "full_name"
        case profilePicture = "profile_picture"
    }
}

/// A photo of a post: where its full image and thumbnail are in file storage, and what it shows.
public struct Photo: Codable, Equatable, Hashable, Sendable {
    /// Storage path of the full image.
    public var full: String
    /// Storage path of the thumbnail.
    public var thumb: String
    /// What the photo shows, for people who cannot see it (absent when none was given).
    public var alt: String?

    /// The longest alt text the rules accept.
    public static let maxAltLength = 1000

    public init(full: String, thumb: String, alt: String? = nil) {
        self.full = full
        self.thumb = thumb
        self.alt = alt
    }

    /// Where photo `index` of post `postID` by `uid` is stored (the full image and the
    /// thumbnail), as the storage rules expect.
    static func paths(uid: String, postID: String, index: Int, contentType: String) -> (full: String, thumb: String) {
        let extensionName = contentType == "image/png" ? "png" : "jpg"
        return ("\(uid)/full/\(postID)/\(index).\(extensionName)", "\(uid)/thumb/\(postID)/\(index).\(extensionName)")
    }
}

/// A post: a title, a body, up to three photos, its author and its stars. A post with photos
/// may have no title and no body (both are then empty strings).
public struct Post: Codable, Equatable, Identifiable, Sendable {
    /// The push ID it is stored under (not stored inside it).
    public var id: String = ""
    public var author: Author
    public var title: String
    public var body: String
    public var photos: [Photo]
    public var timestamp: ServerTimestamp
    public var starCount: Int
    /// Who starred it (uid → true).
    public var stars: [String: Bool]
    /// True when the server's moderation changed its text (set by the server only).
    public var moderated = false
    /// How many comments it has (kept by the server only; 0 when absent).
    public var commentCount = 0

    public static let maxPhotos = 3
    public static let maxTitleLength = 200
    public static let maxBodyLength = 2000

    public init(
        id: String = "", author: Author, title: String, body: String, photos: [Photo] = [], timestamp: ServerTimestamp = .server,
        starCount: Int = 0, stars: [String: Bool] = [:]
    ) {
        self.id = id
        self.author = author
        self.title = title
        self.body = body
        self.photos = photos
        self.timestamp = timestamp
        self.starCount = starCount
        self.stars = stars
    }

    enum CodingKeys: String, CodingKey {
        case author, title, body, photos, timestamp, starCount, stars, moderated, commentCount
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        author = try container.decode(Author.self, forKey: .author)
        title = try container.decodeIfPresent(String.self, forKey: .title) ?? ""
        body = try container.decodeIfPresent(String.self, forKey: .body) ?? ""
        photos = try container.decodeIfPresent([Photo].self, forKey: .photos) ?? []
        timestamp = try container.decodeIfPresent(ServerTimestamp.self, forKey: .timestamp) ?? .server
        starCount = try container.decodeIfPresent(Int.self, forKey: .starCount) ?? 0
        stars = try container.decodeIfPresent([String: Bool].self, forKey: .stars) ?? [:]
        moderated = try container.decodeIfPresent(Bool.self, forKey: .moderated) ?? false
        commentCount = try container.decodeIfPresent(Int.self, forKey: .commentCount) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(author, forKey: .author)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
        if !photos.isEmpty { try container.encode(photos, forKey: .photos) }
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(starCount, forKey: .starCount)
        if !stars.isEmpty { try container.encode(stars, forKey: .stars) }
    }

    /// The hashtags in the title and body (`#sunset` → `sunset`), lowercased, each once. Only
    /// tags of 1 to 50 ASCII letters, digits and underscores are indexed (what the rules accept
    /// as keys under `hashtags/`); `#café` stays plain text rather than failing the post.
    public var hashtags: [String] { Self.hashtags(in: title + " " + body) }

    public static func hashtags(in text: String) -> [String] {
        var tags: [String] = []
        var current: String?
        for character in text + " " {
            if character == "#" {
                current = ""
            } else if var tag = current {
                if character.isLetter || character.isNumber || character == "_" {
                    tag.append(contentsOf: character.lowercased())
                    current = tag
                } else {
                    if Self.isIndexable(tag), !tags.contains(tag) { tags.append(tag) }
                    current = nil
                }
            }
        }
        return tags
    }

    static func isIndexable(_ tag: String) -> Bool {
        (1...50).contains(tag.utf8.count)
            && tag.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: "_") }
    }

    public func isStarred(by uid: String?) -> Bool { uid.map { stars[$0] == true } ?? false }
}

/// A comment on a post.
public struct Comment: Codable, Equatable, Identifiable, Sendable {
    public var id: String = ""
    public var author: Author
    public var text: String
    public var timestamp: ServerTimestamp
    /// The people the comment names ("@Full Name"), uid to name, as the web app records them
    /// when a name is picked from its suggestions (the rules require each to exist).
    public var mentions: [String: String]?
    /// True when the server's moderation changed its text (set by the server only).
    public var moderated: Bool?

    public static let maxLength = 2000

    public init(
        id: String = "", author: Author, text: String, timestamp: ServerTimestamp = .server, mentions: [String: String]? = nil
    ) {
        self.id = id
        self.author = author
        self.text = text
        self.timestamp = timestamp
        self.mentions = mentions
    }

    /// Of ``mentions``, the people whose "@Full Name" is still in `text` (an edit keeps only those).
    public func mentions(keptIn text: String) -> [String: String] {
        (mentions ?? [:]).filter { text.contains("@" + $0.value) }
    }

    enum CodingKeys: String, CodingKey {
        case author, text, timestamp, mentions, moderated
    }
}

/// A user's public profile.
public struct Profile: Codable, Equatable, Identifiable, Sendable {
    public var id: String = ""
    public var fullName: String
    public var profilePicture: String?
    /// A short text about the person (up to 300 characters), shown on the profile.
    public var bio: String?
    /// Lowercased names for prefix search (`_search_index`).
    public var searchIndex: SearchIndex?

    public struct SearchIndex: Codable, Equatable, Sendable {
        public var fullName: String
        public var reversedFullName: String

        enum CodingKeys: String, CodingKey {
            case fullName = "full_name"
            case reversedFullName = "reversed_full_name"
        }
    }

    public init(id: String = "", fullName: String, profilePicture: String? = nil, bio: String? = nil) {
        self.id = id
        self.fullName = fullName
        self.profilePicture = profilePicture
        self.bio = bio
        self.searchIndex = Self.searchIndex(for: fullName)
    }

    /// "Ann Lee" is found by "ann" and by "lee": the name lowercased, and its words reversed.
    public static func searchIndex(for name: String) -> SearchIndex {
        let lower = name.lowercased().trimmingCharacters(in: .whitespaces)
        let reversed = lower.split(separator: " ").reversed().joined(separator: " ")
        return SearchIndex(fullName: lower, reversedFullName: reversed)
    }

    enum CodingKeys: String, CodingKey {
        case fullName = "full_name"
        case profilePicture = "profile_picture"
        case bio
        case searchIndex = "_search_index"
    }
}

/// One user's view of a conversation, kept in their chat list.
public struct ConversationSummary: Codable, Equatable, Identifiable, Sendable {
    public var id: String = ""
    /// The other person.
    public var with: String
    public var lastMessage: String
    public var updated: ServerTimestamp
    /// Messages not yet read by this user.
    public var unread: Int

    public init(id: String = "", with: String, lastMessage: String, updated: ServerTimestamp = .server, unread: Int = 0) {
        self.id = id
        self.with = with
        self.lastMessage = lastMessage
        self.updated = updated
        self.unread = unread
    }

    enum CodingKeys: String, CodingKey {
        case with, lastMessage, updated, unread
    }

    /// The conversation between two users: the same ID from either side.
    public static func id(between first: String, and second: String) -> String {
        [first, second].sorted().joined(separator: "_")
    }
}

/// A chat message.
public struct Message: Codable, Equatable, Identifiable, Sendable {
    public var id: String = ""
    public var from: String
    public var text: String
    public var timestamp: ServerTimestamp

    public static let maxLength = 2000

    public init(id: String = "", from: String, text: String, timestamp: ServerTimestamp = .server) {
        self.id = id
        self.from = from
        self.text = text
        self.timestamp = timestamp
    }

    enum CodingKeys: String, CodingKey {
        case from, text, timestamp
    }
}

/// A model stored under its ID (the database key, not stored inside it).
protocol KeyedModel: Decodable {
    var id: String { get set }
}

extension Post: KeyedModel {}
extension Comment: KeyedModel {}
extension Profile: KeyedModel {}
extension ConversationSummary: KeyedModel {}
extension Message: KeyedModel {}

extension DataSnapshot {
    /// The value decoded as `T` with its key as the ID; nil when it is missing or malformed.
    func decoded<T: KeyedModel>(_ type: T.Type) -> T? {
        guard var value = try? value(as: T.self) else { return nil }
        value.id = key ?? ""
        return value
    }
}

/// A like of a post, as FriendlyPix keeps them: `likes/{postId}/{uid}` holds when it was made.
public struct Like: Codable, Equatable, Identifiable, Sendable {
    public var id: String { uid }
    public var postID: String
    /// Who likes the post.
    public var uid: String
    /// When, in milliseconds since the epoch (server time).
    public var timestamp: Int64

    public init(postID: String, uid: String, timestamp: Int64) {
        self.postID = postID
        self.uid = uid
        self.timestamp = timestamp
    }

    /// The likes of a post, earliest first, from a snapshot of `likes/{postId}`.
    static func all(of postID: String, in snapshot: DataSnapshot) -> [Like] {
        snapshot.children
            .compactMap { child in
                guard let uid = child.key, let time = child.number else { return nil }
                return Like(postID: postID, uid: uid, timestamp: Int64(time))
            }
            .sorted { ($0.timestamp, $0.uid) < ($1.timestamp, $1.uid) }
    }
}

/// A star on a post: `posts/{postId}/stars/{uid}` is true, and the post's `starCount` counts it.
public struct Star: Codable, Equatable, Hashable, Identifiable, Sendable {
    public var id: String { uid }
    public var postID: String
    /// Who starred the post.
    public var uid: String

    public init(postID: String, uid: String) {
        self.postID = postID
        self.uid = uid
    }
}

extension Post {
    /// The post's stars, by starrer.
    public var starList: [Star] {
        stars.filter(\.value).keys.sorted().map { Star(postID: id, uid: $0) }
    }
}

/// One person following another: `followers/{followed}/{follower}` and
/// `people/{follower}/following/{followed}`, always written together.
public struct Follow: Codable, Equatable, Hashable, Identifiable, Sendable {
    public var id: String { "\(follower)_\(followed)" }
    public var follower: String
    public var followed: String

    public init(follower: String, followed: String) {
        self.follower = follower
        self.followed = followed
    }
}

/// A post in someone's home feed: `feed/{uid}/{postId}` (push IDs order it by time).
public struct FeedEntry: Codable, Equatable, Hashable, Identifiable, Sendable {
    public var id: String { postID }
    public var postID: String

    public init(postID: String) {
        self.postID = postID
    }
}

/// A post someone saved: `saved/{uid}/{postId}` holds when it was saved.
public struct SavedPost: Codable, Equatable, Hashable, Identifiable, Sendable {
    public var id: String { postID }
    public var postID: String
    /// When, in milliseconds since the epoch (server time).
    public var savedAt: Int64

    public init(postID: String, savedAt: Int64) {
        self.postID = postID
        self.savedAt = savedAt
    }
}
