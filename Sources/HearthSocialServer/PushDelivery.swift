import Foundation
import HearthCore

/// Notifications that reach a closed app: what happened (a notification, a direct message) is
/// sent by Web Push to every browser the person allowed (`pushSubscriptions/{uid}/{id}`), unless
/// they turned that kind off (`notificationSettings/{uid}/{kind}`: false). A subscription the
/// push service reports as gone, or refuses for good, is removed; so are all but a person's
/// ``subscriptionsKept`` newest, so what one person stores cannot multiply every push.
struct PushDelivery: Sendable {
    /// What one push shows.
    struct Message: Equatable, Sendable {
        /// `follow`, `like`, `comment`, `mention` or `message`: what the person can turn off.
        var kind: String
        var title: String
        var body: String
        /// The app's screen to open (`#/post/…`), relative to the app.
        var url: String
        /// Replaces an earlier push with the same tag on the device.
        var tag: String

        /// The JSON the service worker reads.
        var payload: [UInt8] {
            let fields: [(ChildKey, Node)] = [
                (ChildKey("kind"), .string(kind)), (ChildKey("title"), .string(title)), (ChildKey("body"), .string(body)),
                (ChildKey("url"), .string(url)), (ChildKey("tag"), .string(tag)),
            ]
            return JSONWriter.bytes(.object(fields))
        }
    }

    /// The kinds a person may turn off, in the settings screen's order.
    static let kinds = ["follow", "like", "comment", "mention", "message"]

    /// How many browsers one person may have subscribed: the newest (by when they were stored).
    static let subscriptionsKept = 10

    let data: any SocialData
    let send: @Sendable (Message, WebPushSubscription) async throws -> WebPushSender.Outcome
    let allowsLoopbackHTTP: Bool

    /// The push for the notification `notification` in `uid`'s inbox.
    static func message(for notification: Node, id: String, postTitle: String?) -> Message? {
        guard let kind = notification.at("type").string, let from = notification.at("from").string else { return nil }
        let name = notification.at("name").string ?? "Someone"
        let post = notification.at("post").string
        // A photo-only post has an empty title: the post is then just "your post".
        let about = postTitle.flatMap { $0.isEmpty ? nil : " “\(String($0.prefix(80)))”" } ?? ""
        let words: String
        switch kind {
        case "like": words = "liked your post\(about)"
        case "comment": words = "commented on your post\(about)"
        case "follow": words = "started following you"
        case "mention": words = notification.at("comment").isNull ? "mentioned you in a post\(about)" : "mentioned you in a comment\(about)"
        default: return nil
        }
        let url = kind == "follow" || post == nil ? "#/profile/\(from)" : "#/post/\(post!)"
        return Message(kind: kind, title: name, body: "\(name) \(words)", url: url, tag: id)
    }

    /// The push for a direct message `message` in conversation `conversation`.
    static func message(forChat message: Node, conversation: String, senderName: String?) -> Message? {
        guard message.at("from").string != nil, let text = message.at("text").string else { return nil }
        let name = senderName ?? "Someone"
        return Message(kind: "message", title: name, body: String(text.prefix(200)), url: "#/chat/\(conversation)", tag: "chat_\(conversation)")
    }

    /// Sends `message` to `uid`'s browsers; returns how many took it.
    /// - Throws: when a push service asked to be tried again later (the event is retried).
    func deliver(_ message: Message, to uid: String) async throws -> Int {
        guard try await data.value(at: .of("notificationSettings", uid, message.kind)).unprioritized != .bool(false) else { return 0 }
        var delivered = 0
        var retry: String?
        var removed = SocialChanges()
        let (kept, beyond) = Self.newest(try await data.value(at: .of("pushSubscriptions", uid)).entries)
        for (id, _) in beyond { removed.delete(.of("pushSubscriptions", uid, id)) }
        for (id, stored) in kept {
            guard let subscription = Self.subscription(stored, allowsLoopbackHTTP: allowsLoopbackHTTP), subscription.id == id else {
                removed.delete(.of("pushSubscriptions", uid, id))
                continue
            }
            switch try await send(message, subscription) {
            case .delivered: delivered += 1
            case .gone, .rejected: removed.delete(.of("pushSubscriptions", uid, id))
            case .retryLater(_, let reason): retry = reason
            }
        }
        if !removed.isEmpty { try await data.update(removed.values) }
        if let retry { throw PushUnavailable(reason: retry) }
        return delivered
    }

    /// Removes all but `uid`'s ``subscriptionsKept`` newest subscriptions.
    func trimSubscriptions(of uid: String) async throws {
        let (_, beyond) = Self.newest(try await data.value(at: .of("pushSubscriptions", uid)).entries)
        guard !beyond.isEmpty else { return }
        var removed = SocialChanges()
        for (id, _) in beyond { removed.delete(.of("pushSubscriptions", uid, id)) }
        try await data.update(removed.values)
    }

    /// Stored subscriptions split into the ``subscriptionsKept`` newest and the rest (by
    /// `created`, then ID: the same split every time).
    static func newest(_ entries: [(key: String, value: Node)]) -> (kept: ArraySlice<(key: String, value: Node)>, beyond: ArraySlice<(key: String, value: Node)>) {
        let ordered = entries.sorted { first, second in
            let (a, b) = (first.value.at("created").numberValue ?? 0, second.value.at("created").numberValue ?? 0)
            return a != b ? a > b : first.key > second.key
        }
        return (ordered.prefix(subscriptionsKept), ordered.dropFirst(subscriptionsKept))
    }

    /// A stored subscription, checked; nil when it is not a usable one.
    static func subscription(_ stored: Node, allowsLoopbackHTTP: Bool) -> WebPushSubscription? {
        guard let endpoint = stored.at("endpoint").string, let p256dh = stored.at("keys", "p256dh").string,
            let auth = stored.at("keys", "auth").string
        else { return nil }
        return try? WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth, allowsLoopbackHTTP: allowsLoopbackHTTP)
    }

    /// A push service asked to be tried again later.
    struct PushUnavailable: Error, CustomStringConvertible {
        var reason: String
        var description: String { "a push service asked to be tried again later: \(reason)" }
    }
}
