import Foundation
import HearthClient
import Observation

/// The home feed, FriendlyPix's way: `feed/{uid}` lists post IDs from the people one follows
/// (and one's own), filled lazily by the reader's own client: on start it adds what the
/// followed people posted meanwhile, and while open it adds their new posts as they appear.
/// Entries whose post was deleted are removed.
@MainActor
@Observable
public final class FeedViewModel {
    /// Newest first.
    /// The feed's entries shown, newest first (some may point at posts since deleted).
    public private(set) var entries: [FeedEntry] = []
    /// The posts of those entries that exist, in the same order.
    public private(set) var posts: [Post] = []
    public private(set) var isLoading = true
    public private(set) var hasMore = false
    public private(set) var errorMessage: String?

    public let pageSize: Int
    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var limit: Int
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []

    public init(client: SocialClient, pageSize: Int = 10) {
        self.client = client
        self.pageSize = pageSize
        self.limit = pageSize
    }

    isolated deinit {
        for listener in listeners { listener.cancel() }
    }

    /// Catches the feed up with the followed people's posts, then listens.
    public func start() async {
        stop()
        guard let uid = client.uid else {
            errorMessage = SocialError.notSignedIn.description
            isLoading = false
            return
        }
        do {
            try await catchUp(uid)
        } catch {
            errorMessage = SocialError.words(for: error)
        }
        listenToFeed(uid)
        listenToFollowedPeople(uid)
    }

    public func loadMore() {
        guard hasMore, let uid = client.uid else { return }
        limit += pageSize
        for listener in listeners { listener.cancel() }
        listeners = []
        listenToFeed(uid)
        listenToFollowedPeople(uid)
    }

    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
    }

    /// Adds to `feed/{uid}` every post of the followed people that is not there yet.
    private func catchUp(_ uid: String) async throws {
        let root = client.database.root
        let following = try await root.child("people/\(uid)/following").getData().childKeys
        let present = Set(try await root.child("feed/\(uid)").getData().childKeys)
        var updates: [String: DatabaseValue] = [:]
        for followed in following {
            for postID in try await root.child("people/\(followed)/posts").getData().childKeys where !present.contains(postID) {
                updates["feed/\(uid)/\(postID)"] = true
            }
        }
        try await client.settle(root.updateChildValues(updates))
    }

    private func listenToFeed(_ uid: String) {
        let query = client.database.root.child("feed/\(uid)").queryOrderedByKey().queryLimited(toLast: limit + 1)
        let limit = self.limit
        let loader = PostLoader(client: client)
        listeners.append(watchValue(query, for: self) { model, snapshot in
            var ids = snapshot.childKeys
            let more = ids.count > limit
            if more { ids.removeFirst(ids.count - limit) }
            let posts = try await loader.posts(ids.reversed())
            model.entries = ids.reversed().map(FeedEntry.init(postID:))
            model.posts = posts
            model.hasMore = more
            model.isLoading = false
            await model.removeStale(ids, present: Set(posts.map(\.id)), uid: uid)
        } fail: { model, message in
            model.errorMessage = message
        })
    }

    /// New posts of the followed people go into the feed as they are published.
    private func listenToFollowedPeople(_ uid: String) {
        let root = client.database.root
        listeners.append(Task { [weak self] in
            do {
                var watched: [String: Task<Void, Never>] = [:]
                defer { for task in watched.values { task.cancel() } }
                for try await event in root.child("people/\(uid)/following").observe(.value) {
                    let following = Set(event.snapshot.childKeys)
                    for (followed, task) in watched where !following.contains(followed) {
                        task.cancel()
                        watched[followed] = nil
                    }
                    for followed in following where watched[followed] == nil {
                        watched[followed] = Task {
                            do {
                                for try await added in root.child("people/\(followed)/posts").observe(.childAdded) {
                                    guard let postID = added.snapshot.key else { continue }
                                    root.child("feed/\(uid)/\(postID)").setValue(DatabaseValue(true))
                                }
                            } catch {}
                        }
                    }
                }
            } catch is CancellationError {
            } catch {
                self?.errorMessage = SocialError.words(for: error)
            }
        })
    }

    private func removeStale(_ ids: [String], present: Set<String>, uid: String) async {
        var updates: [String: DatabaseValue] = [:]
        for id in ids where !present.contains(id) { updates["feed/\(uid)/\(id)"] = .null }
        client.database.root.updateChildValues(updates)
    }
}
