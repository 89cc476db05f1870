import Foundation
import HearthClient
import Observation

/// The app's sync state for a status bar: offline or not, how many changes wait to be sent,
/// which posts, comments and messages are still only on this device (with the posts with
/// photos waiting in the ``PostQueue``), and the last change the server refused after the app
/// had moved on.
@MainActor
@Observable
public final class SyncStatusViewModel {
    public private(set) var isOnline = false
    public private(set) var pendingCount = 0
    /// Posts with photos made offline, oldest first, waiting on this device to be sent (their
    /// ``QueuedPost/thumbnailFiles`` show them meanwhile).
    public private(set) var waitingPosts: [QueuedPost] = []
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
        let waiting = pendingCount + waitingPosts.count
        let changes = "\(waiting) \(waiting == 1 ? "change" : "changes")"
        if !isOnline { return waiting > 0 ? "Offline — \(changes) will sync" : "Offline — changes will sync" }
        if waiting > 0 { return "Sending \(changes)…" }
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

    /// Gives up on a post waiting to be sent.
    public func cancelWaitingPost(_ id: String) async {
        await client.postQueue.cancel(id)
    }

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
        let queue = client.postQueue
        let people = client.auth.stateChanges()
        listeners.append(Task {
            // The signed-in person's posts left waiting (by an earlier launch too) are sent;
            // another person's wait for them.
            for await _ in people { await queue.resume() }
        })
        listeners.append(Task { [weak self] in
            for await posts in await queue.changes() {
                guard let self else { return }
                self.waitingPosts = posts
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
