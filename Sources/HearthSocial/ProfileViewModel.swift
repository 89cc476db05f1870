import Foundation
import HearthClient
import Observation

/// A person's profile, live: name and picture, counts of posts, followers and following, a
/// grid of their posts, and (for someone else's profile) follow and block.
@MainActor
@Observable
public final class ProfileViewModel {
    public let uid: String
    public private(set) var profile: Profile?
    public private(set) var postCount = 0
    /// The people following this profile.
    public private(set) var followers: [Follow] = []
    public private(set) var followingCount = 0
    /// The signed-in user follows this person.
    public private(set) var isFollowing = false
    /// The signed-in user blocked this person.
    public private(set) var isBlocked = false
    public private(set) var errorMessage: String?
    /// Their posts, newest first, in pages.
    public let posts: PostListViewModel

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listeners: [Task<Void, Never>] = []

    public init(client: SocialClient, uid: String, pageSize: Int = 12) {
        self.client = client
        self.uid = uid
        self.posts = PostListViewModel(client: client, kind: .user(uid), pageSize: pageSize)
    }

    isolated deinit {
        for listener in listeners { listener.cancel() }
    }

    /// True on one's own profile.
    public var isOwn: Bool { client.uid == uid }
    public var followerCount: Int { followers.count }

    public func start() {
        stop()
        let root = client.database.root
        listen(root.child("people/\(uid)").query) { model, snapshot in
            model.profile = snapshot.decoded(Profile.self)
            model.postCount = snapshot.childSnapshot(forPath: "posts").childrenCount
            model.followingCount = snapshot.childSnapshot(forPath: "following").childrenCount
        }
        listen(root.child("followers/\(uid)").query) { model, snapshot in
            model.followers = snapshot.childKeys.map { Follow(follower: $0, followed: model.uid) }
            model.isFollowing = model.client.uid.map { snapshot.hasChild($0) } ?? false
        }
        if let me = client.uid, me != uid {
            listen(root.child("blocking/\(me)/\(uid)").query) { model, snapshot in
                model.isBlocked = snapshot.exists
            }
        }
        posts.start()
    }

    public func stop() {
        for listener in listeners { listener.cancel() }
        listeners = []
        posts.stop()
    }

    private func listen(_ query: DatabaseQuery, _ show: @escaping @MainActor (ProfileViewModel, DataSnapshot) -> Void) {
        listeners.append(watchValue(query, for: self, show: show) { model, message in
            model.errorMessage = message
        })
    }

    /// Follows or unfollows, in one write: both sides of the follow, the feed entries for
    /// their posts, and their notification (removed again on unfollowing).
    public func toggleFollow() async {
        await perform {
            let me = try self.client.requireUser().uid
            guard me != self.uid else { throw SocialError.invalid("You cannot follow yourself.") }
            let root = self.client.database.root
            let follow = !self.isFollowing
            guard let author = self.client.author else { throw SocialError.notSignedIn }
            var updates: [String: DatabaseValue] = [
                "followers/\(self.uid)/\(me)": follow ? true : .null,
                "people/\(me)/following/\(self.uid)": follow ? true : .null,
            ]
            updates.merge(try ActivityNotification.updates(to: self.uid, .follow, by: author, undo: !follow)) { $1 }
            for postID in try await root.child("people/\(self.uid)/posts").getData().childKeys {
                updates["feed/\(me)/\(postID)"] = follow ? true : .null
            }
            let write = root.updateChildValues(updates)
            self.isFollowing = follow
            try await self.client.settle(write)
        }
    }

    /// Blocks or unblocks (blocking also unfollows, as in FriendlyPix).
    public func toggleBlock() async {
        await perform {
            let me = try self.client.requireUser().uid
            guard me != self.uid else { throw SocialError.invalid("You cannot block yourself.") }
            let block = !self.isBlocked
            var updates: [String: DatabaseValue] = [
                "blocking/\(me)/\(self.uid)": block ? true : .null,
                "blocked/\(self.uid)/\(me)": block ? true : .null,
            ]
            if block && self.isFollowing {
                updates["followers/\(self.uid)/\(me)"] = .null
                updates["people/\(me)/following/\(self.uid)"] = .null
                updates[ActivityNotification.path(to: self.uid, .follow, from: me)] = .null
            }
            let write = self.client.database.root.updateChildValues(updates)
            self.isBlocked = block
            try await self.client.settle(write)
        }
    }

    private func perform(_ work: @escaping () async throws -> Void) async {
        errorMessage = nil
        do {
            try await work()
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }
}
