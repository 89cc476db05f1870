import Foundation
import HearthClient
import Observation

/// The app's sync state for a status bar: offline or not, how many changes wait to be sent,
/// which posts, comments and messages are still only on this device, and the last change the
/// server refused after the app had moved on.
@MainActor
@Observable
public final class SyncStatusViewModel {
    public private(set) var isOnline = false
    public private(set) var pendingCount = 0
    /// A change made offline that the server refused when it was sent, in words.
    public private(set) var lateRefusal: String?
    @ObservationIgnored private var status = SyncStatus(isConnected: false, pendingWriteCount: 0, pendingWritePaths: [])
    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []

    public init(client: SocialClient) {
        self.client = client
    }

    isolated deinit {
        for listener in listeners { listener.cancel() }
    }

    /// What the status bar says, or nil when everything is sent.
    public var message: String? {
        if !isOnline { return pendingCount > 0 ? "Offline — \(pendingCount) \(pendingCount == 1 ? "change" : "changes") will sync" : "Offline — changes will sync" }
        if pendingCount > 0 { return "Sending \(pendingCount) \(pendingCount == 1 ? "change" : "changes")…" }
        return nil
    }

    /// True while the post (or its copy, stars or index entries) has changes not yet sent.
    public func isPending(post postID: String) -> Bool {
        status.hasPendingWrites(at: "posts/\(postID)")
    }

    public func isPending(comment commentID: String, on postID: String) -> Bool {
        status.hasPendingWrites(at: "comments/\(postID)/\(commentID)")
    }

    public func isPending(message messageID: String, in conversationID: String) -> Bool {
        status.hasPendingWrites(at: "messages/\(conversationID)/\(messageID)")
    }

    public func dismissRefusal() { lateRefusal = nil }

    /// Follows the connection and the write queue until ``stop()``.
    public func start() {
        stop()
        let updates = client.database.observeSyncStatus()
        listeners.append(Task { [weak self] in
            for await status in updates {
                guard let self else { return }
                self.status = status
                self.isOnline = status.isConnected
                self.pendingCount = status.pendingWriteCount
            }
        })
        let refusals = client.lateRefusals
        listeners.append(Task { [weak self] in
            for await refusal in refusals {
                self?.lateRefusal = refusal
            }
        })
    }

    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
    }
}
