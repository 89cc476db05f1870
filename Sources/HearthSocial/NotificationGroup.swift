import HearthClient

/// Notifications of one kind about one post, one entry on the notifications screen: "Carol and
/// Bob liked your post", "Carol, Bob and 2 others commented on your post". The same grouping
/// as the web app's `app/notification-groups.js`. Pure: no database.
public struct NotificationGroup: Equatable, Identifiable, Sendable {
    /// Who did it, once each, newest first.
    public struct Person: Equatable, Sendable {
        public var uid: String
        public var name: String
    }

    /// The oldest member's ID: newer ones joining do not change it, so a list keeps its row.
    public var id: String
    public var type: ActivityNotification.Kind
    public var post: String?
    /// The notifications, newest first.
    public var members: [ActivityNotification]
    public var people: [Person]
    /// The newest member's time.
    public var timestamp: ServerTimestamp
    /// True when any member is unread.
    public var isUnread: Bool

    /// How far apart in time notifications of one group may be: a like today and one last
    /// month are two pieces of news, not one.
    public static let window: Int64 = 24 * 60 * 60 * 1000

    /// Kinds that are grouped (a follow is about no post: each follower is news of their own).
    static let grouped: Set<ActivityNotification.Kind> = [.like, .comment, .mention]

    /// Who, as a sentence says them ("Carol, Bob and 2 others").
    public var who: String { PeopleWords.phrase(people.map(\.name), total: people.count) }

    /// What they did, after the names ("liked your post").
    public var what: String {
        switch type {
        case .like: "liked your post"
        case .comment: "commented on your post"
        case .follow: "started following you"
        case .mention: "mentioned you"
        }
    }

    /// Groups `notifications` (newest first, as the screen lists them). One joins the group of
    /// its kind and post whose newest member is at most `window` newer than it; else it starts
    /// one. Groups keep the list's order (by their newest member).
    public static func grouping(_ notifications: [ActivityNotification], window: Int64 = window) -> [NotificationGroup] {
        var groups: [NotificationGroup] = []
        /// The index of the open group of each kind and post (one a still older one may join).
        var open: [String: Int] = [:]
        for notification in notifications {
            let time = notification.timestamp.milliseconds ?? 0
            let topic = grouped.contains(notification.type) ? notification.post.map { "\(notification.type.rawValue)\u{0}\($0)" } : nil
            var index = topic.flatMap { open[$0] }
            if let found = index, (groups[found].timestamp.milliseconds ?? 0) - time > window { index = nil }
            if index == nil {
                groups.append(NotificationGroup(
                    id: notification.id, type: notification.type, post: notification.post, members: [], people: [],
                    timestamp: notification.timestamp, isUnread: false))
                index = groups.count - 1
                if let topic { open[topic] = index }
            }
            guard let index else { continue }
            groups[index].members.append(notification)
            groups[index].id = notification.id
            groups[index].isUnread = groups[index].isUnread || !notification.read
            // One person twice (two comments) is named once.
            if !groups[index].people.contains(where: { $0.uid == notification.from }) {
                groups[index].people.append(Person(uid: notification.from, name: notification.name.isEmpty ? "Someone" : notification.name))
            }
        }
        return groups
    }
}
