import Foundation
import HearthClient
import Observation

/// A live list of posts: recent (everyone's, newest first), one user's (newest first), or top
/// (most stars first). Pages grow with ``loadMore()``; changes appear as they happen.
@MainActor
@Observable
public final class PostListViewModel {
    public enum Kind: Sendable, Equatable {
        /// Everyone's posts, newest first.
        case recent
        /// The signed-in user's posts, newest first.
        case mine
        /// One user's posts, newest first.
        case user(String)
        /// Everyone's posts, most stars first.
        case top
    }

    public let kind: Kind
    public let pageSize: Int
    public private(set) var posts: [Post] = []
    /// True until the first answer arrives.
    public private(set) var isLoading = true
    /// True when a further page may exist.
    public private(set) var hasMore = false
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var limit: Int
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient, kind: Kind, pageSize: Int = 10) {
        self.client = client
        self.kind = kind
        self.pageSize = pageSize
        self.limit = pageSize
    }

    isolated deinit {
        listener?.cancel()
    }

    /// Starts (or restarts) listening.
    public func start() {
        listener?.cancel()
        errorMessage = nil
        guard let query = query() else {
            posts = []
            isLoading = false
            errorMessage = SocialError.notSignedIn.description
            return
        }
        let limit = self.limit
        listener = watchValue(query, for: self) { model, snapshot in
            model.show(snapshot, limit: limit)
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    /// Shows one more page.
    public func loadMore() {
        guard hasMore else { return }
        limit += pageSize
        start()
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }

    private func query() -> DatabaseQuery? {
        let root = client.database.root
        // One more than shown: whether it comes tells whether there is another page.
        let fetched = limit + 1
        switch kind {
        case .recent: return root.child("posts").queryOrderedByKey().queryLimited(toLast: fetched)
        case .top: return root.child("posts").queryOrdered(byChild: "starCount").queryLimited(toLast: fetched)
        case .mine:
            guard let uid = client.uid else { return nil }
            return root.child("user-posts/\(uid)").queryOrderedByKey().queryLimited(toLast: fetched)
        case .user(let uid): return root.child("user-posts/\(uid)").queryOrderedByKey().queryLimited(toLast: fetched)
        }
    }

    private func show(_ snapshot: DataSnapshot, limit: Int) {
        var decoded = snapshot.children.compactMap { $0.decoded(Post.self) }
        // In the query's (ascending) order the extra one is the first.
        hasMore = decoded.count > limit
        if hasMore { decoded.removeFirst(decoded.count - limit) }
        switch kind {
        case .top:
            // The query's order is by stars, ascending: show the most starred first.
            posts = decoded.reversed()
        default:
            posts = decoded.sorted { $0.id > $1.id }
        }
        isLoading = false
    }
}
