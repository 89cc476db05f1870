import Foundation
import HearthClient
import Observation

/// The signed-in person's notifications, live, newest first (the latest ``pageSize``), with the
/// unread count for a badge; ``markAllRead()`` marks the ones shown read in one write, as the
/// web app does when its notifications screen is seen.
@MainActor
@Observable
public final class NotificationListViewModel {
    public private(set) var notifications: [ActivityNotification] = []
    /// The notifications as the screen shows them: of one kind about one post, one entry
    /// ("Carol and Bob liked your post").
    public var groups: [NotificationGroup] { NotificationGroup.grouping(notifications) }
    public var unreadCount: Int { notifications.count { !$0.read } }
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private let pageSize: Int
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient, pageSize: Int = 20) {
        self.client = client
        self.pageSize = pageSize
    }

    isolated deinit {
        listener?.cancel()
    }

    public func start() {
        listener?.cancel()
        guard let uid = client.uid else { return errorMessage = SocialError.notSignedIn.description }
        let query = client.database.root.child("notifications/\(uid)").queryOrdered(byChild: "timestamp").queryLimited(toLast: pageSize)
        listener = watchValue(query, for: self) { model, snapshot in
            // The query's order is by time, ascending: newest first for the list.
            model.notifications = snapshot.children.reversed().compactMap { $0.decoded(ActivityNotification.self) }
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Marks every unread notification shown as read (the rules let only their recipient, and
    /// only to true).
    public func markAllRead() async {
        errorMessage = nil
        guard let uid = client.uid else { return errorMessage = SocialError.notSignedIn.description }
        var updates: [String: DatabaseValue] = [:]
        for notification in notifications where !notification.read { updates["\(notification.id)/read"] = true }
        guard !updates.isEmpty else { return }
        do {
            try await client.settle(client.database.root.child("notifications/\(uid)").updateChildValues(updates))
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }
}
