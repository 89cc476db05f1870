import Foundation
import HearthClient
import Observation

/// The home feed, FriendlyPix's way: `feed/{uid}` lists post IDs from the people one follows
/// (and one's own), filled lazily by the reader's own client: on start it adds what the
/// followed people posted meanwhile, and while open it adds their new posts as they appear.
/// Entries whose post was deleted are removed.
///
/// The catch-up is lazy: the first time (per ``FeedCatchUpMarkers``), and whenever whom one
/// follows changed, it reads the feed and every followed person's posts; later starts ask only
/// for the posts written since the last one and write only the entries that are new, so a
/// start with nothing new writes nothing.
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
    /// The feed entries this model wrote since it was made (catch-ups and live additions).
    public private(set) var entriesWritten = 0

    public let pageSize: Int
    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var limit: Int
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []
    @ObservationIgnored private let markers: FeedCatchUpMarkers
    /// Posts are asked for from this long before the last catch-up (a post's time is its commit's).
    private static let marginMilliseconds: Int64 = 10_000

    /// - Parameter markers: where the last catch-up is remembered (shared by the app's feeds).
    public init(client: SocialClient, pageSize: Int = 10, markers: FeedCatchUpMarkers = FeedCatchUpMarkers()) {
        self.client = client
        self.pageSize = pageSize
        self.limit = pageSize
        self.markers = markers
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

    /// Adds to `feed/{uid}` the posts of the followed people that are not there yet (one write):
    /// all of them the first time or after whom one follows changed, else those written since
    /// the last catch-up.
    private func catchUp(_ uid: String) async throws {
        let root = client.database.root
        let following = try await root.child("people/\(uid)/following").getData().childKeys.sorted()
        // The server's clock, as the newest post's time (posts after it have later times).
        let byTime = root.child("posts").queryOrdered(byChild: "timestamp")
        var newestTime: Int64 = 0
        var candidates: [String] = []
        var present: Set<String> = []
        if let marker = markers.marker(for: uid), marker.following == following {
            let since = DatabaseValue(Double(marker.since - Self.marginMilliseconds))
            let recent = try await byTime.queryStarting(atValue: since).getData()
            newestTime = recent.children.compactMap { $0.childSnapshot(forPath: "timestamp").number.map { Int64($0) } }.max() ?? marker.since
            let followed = Set(following)
            candidates = recent.children.filter { followed.contains($0.childSnapshot(forPath: "author/uid").string ?? "") }.compactMap(\.key)
            if let oldest = candidates.min() {
                present = Set(try await root.child("feed/\(uid)").queryOrderedByKey().queryStarting(atValue: DatabaseValue(oldest)).getData().childKeys)
            }
        } else {
            let newest = try await byTime.queryLimited(toLast: 1).getData()
            newestTime = newest.children.first?.childSnapshot(forPath: "timestamp").number.map { Int64($0) } ?? 0
            present = Set(try await root.child("feed/\(uid)").getData().childKeys)
            for followed in following {
                candidates += try await root.child("people/\(followed)/posts").getData().childKeys
            }
        }
        var updates: [String: DatabaseValue] = [:]
        for postID in candidates where !present.contains(postID) {
            updates["feed/\(uid)/\(postID)"] = true
        }
        if !updates.isEmpty {
            try await client.settle(root.updateChildValues(updates))
            entriesWritten += updates.count
        }
        markers.keep(FeedCatchUpMarkers.Marker(following: following, since: newestTime), for: uid)
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
                        // Their newest post only: each new one becomes it (an added child), and
                        // at the start it is the one the catch-up saw. Written only if missing.
                        watched[followed] = Task { [weak self] in
                            do {
                                let newest = root.child("people/\(followed)/posts").queryOrderedByKey().queryLimited(toLast: 1)
                                for try await added in newest.observe(.childAdded) {
                                    guard let postID = added.snapshot.key else { continue }
                                    let entry = root.child("feed/\(uid)/\(postID)")
                                    if try await entry.getData().exists { continue }
                                    entry.setValue(DatabaseValue(true))
                                    self?.entriesWritten += 1
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
