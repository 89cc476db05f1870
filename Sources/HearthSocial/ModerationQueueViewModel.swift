import Foundation
import HearthClient
import Observation

/// The admins' moderation queue: what people reported, most reported first, and what an admin
/// can do about it — remove the post or comment (the server takes everything that points at
/// it too), dismiss the reports, or suspend the author's account. Each action is a request the
/// server carries out with its own authority (`adminRequests/`); the rules let only admins make
/// one, and only about something that exists.
@MainActor
@Observable
public final class ModerationQueueViewModel {
    /// One reported post or comment.
    public struct Report: Identifiable, Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            case post
            case comment(String)
        }

        public var kind: Kind
        public var postID: String
        /// Whose it is.
        public var author: String
        /// How many people reported it.
        public var count: Int
        /// Its title (a post) or text (a comment), shortened.
        public var text: String
        /// When it was last reported (milliseconds since the epoch).
        public var updated: Int64

        public init(kind: Kind, postID: String, author: String, count: Int, text: String, updated: Int64) {
            self.kind = kind
            self.postID = postID
            self.author = author
            self.count = count
            self.text = text
            self.updated = updated
        }

        public var id: String {
            switch kind {
            case .post: "post/\(postID)"
            case .comment(let comment): "comment/\(postID)/\(comment)"
            }
        }
    }

    /// Most reported first, then most recent.
    public private(set) var reports: [Report] = []
    /// True once the queue came, false once the server refused it (the reader is not an
    /// admin); nil until then.
    public private(set) var isAdmin: Bool?
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []
    @ObservationIgnored private var posts: [Report] = []
    @ObservationIgnored private var comments: [Report] = []

    public init(client: SocialClient) {
        self.client = client
    }

    isolated deinit {
        for listener in listeners { listener.cancel() }
    }

    /// Listens to the queue, with a fresh token first (an admin claim given since the last one
    /// is only in a new token).
    public func start() async {
        stop()
        isAdmin = nil
        _ = try? await client.auth.idToken(forceRefresh: true)
        let root = client.database.root
        listeners.append(listen(root.child("reports/posts").query) { model, snapshot in
            model.posts = snapshot.children.compactMap { Self.report($0, kind: .post, postID: $0.key) }
            model.sort()
        })
        listeners.append(listen(root.child("reports/comments").query) { model, snapshot in
            model.comments = snapshot.children.flatMap { post in
                post.children.compactMap { Self.report($0, kind: .comment($0.key ?? ""), postID: post.key) }
            }
            model.sort()
        })
    }

    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
    }

    /// Removes the reported post or comment.
    public func remove(_ report: Report) async {
        switch report.kind {
        case .post: await request(["action": "removePost", "post": DatabaseValue(report.postID)])
        case .comment(let comment):
            await request(["action": "removeComment", "post": DatabaseValue(report.postID), "comment": DatabaseValue(comment)])
        }
    }

    /// Keeps the post or comment and clears its reports.
    public func dismiss(_ report: Report) async {
        var fields: [String: DatabaseValue] = ["action": "dismiss", "post": DatabaseValue(report.postID)]
        if case .comment(let comment) = report.kind { fields["comment"] = DatabaseValue(comment) }
        await request(fields)
    }

    /// Suspends (disables) the account `uid`: it can no longer sign in.
    public func suspend(_ uid: String) async {
        await request(["action": "suspend", "uid": DatabaseValue(uid)])
    }

    /// Lets a suspended account sign in again.
    public func reinstate(_ uid: String) async {
        await request(["action": "reinstate", "uid": DatabaseValue(uid)])
    }

    private func request(_ fields: [String: DatabaseValue]) async {
        errorMessage = nil
        do {
            let me = try client.requireUser().uid
            var request = fields
            request["by"] = DatabaseValue(me)
            request["timestamp"] = .serverTimestamp
            try await client.settle(client.database.root.child("adminRequests").childByAutoId().updateChildValues(request))
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }

    private func sort() {
        reports = (posts + comments).sorted { ($0.count, $0.updated) > ($1.count, $1.updated) }
    }

    private static func report(_ snapshot: DataSnapshot, kind: Report.Kind, postID: String?) -> Report? {
        guard let postID, let author = try? snapshot.childSnapshot(forPath: "author").value(as: String.self) else { return nil }
        return Report(
            kind: kind, postID: postID, author: author, count: (try? snapshot.childSnapshot(forPath: "count").value(as: Int.self)) ?? 0,
            text: (try? snapshot.childSnapshot(forPath: "text").value(as: String.self)) ?? "",
            updated: (try? snapshot.childSnapshot(forPath: "updated").value(as: Int64.self)) ?? 0)
    }

    private func listen(_ query: DatabaseQuery, _ show: @escaping @MainActor (ModerationQueueViewModel, DataSnapshot) -> Void) -> Task<Void, Never> {
        Task { [weak self] in
            do {
                for try await event in query.observe(.value) {
                    guard let self else { return }
                    self.isAdmin = true
                    show(self, event.snapshot)
                }
            } catch let error as HearthClientError where error.kind == .permissionDenied {
                self?.isAdmin = false
            } catch is CancellationError {
            } catch {
                self?.errorMessage = SocialError.words(for: error)
            }
        }
    }
}
