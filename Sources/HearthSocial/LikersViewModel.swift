import Foundation
import HearthClient
import Observation

/// Who liked a post, live from FriendlyPix's `likes/{postId}`: the line under its like button
/// ("Liked by you, Carol and 3 others") and, once ``openList()`` is called, everyone (the
/// newest ``maxListed``) with their names, as the web app's "Liked by" dialog lists them.
/// Names come from `people/{uid}/full_name`, read once each.
@MainActor
@Observable
public final class LikersViewModel {
    /// Someone who liked the post.
    public struct Liker: Equatable, Identifiable, Sendable {
        public var id: String { uid }
        public var uid: String
        /// "Someone" when their profile has no name (or cannot be read).
        public var name: String
        /// The reader themselves.
        public var isReader: Bool
    }

    public let postID: String
    /// "Liked by …"; empty when nobody likes the post.
    public private(set) var line = ""
    /// Everyone who liked it, newest first, up to ``maxListed``; filled while the list is open.
    public private(set) var likers: [Liker] = []
    /// How many like the post.
    public private(set) var total = 0
    /// How many more like it than ``likers`` lists ("and 12 more").
    public var moreCount: Int { isListOpen ? max(0, total - likers.count) : 0 }
    public private(set) var isListOpen = false
    public private(set) var errorMessage: String?
    /// People listed at most (a very popular post says how many more).
    public let maxListed: Int

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listener: Task<Void, Never>?
    @ObservationIgnored private var names: [String: String] = [:]
    /// Every liker's uid, newest first, from the last value.
    @ObservationIgnored private var uids: [String] = []
    /// Counts the values shown, so an older one still reading names does not overwrite a newer one.
    @ObservationIgnored private var shown = 0

    public init(client: SocialClient, postID: String, maxListed: Int = 200) {
        self.client = client
        self.postID = postID
        self.maxListed = maxListed
    }

    isolated deinit {
        listener?.cancel()
    }

    public func start() {
        listener?.cancel()
        listener = watchValue(client.database.root.child("likes/\(postID)").query, for: self) { model, snapshot in
            model.uids = PeopleWords.likers(Like.all(of: model.postID, in: snapshot))
            await model.show()
        } fail: { model, message in
            // Not readable (or gone with its post): nothing to show.
            model.errorMessage = message
            model.line = ""
            model.likers = []
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Lists everyone (the newest ``maxListed``) with their names, until ``closeList()``.
    public func openList() async {
        isListOpen = true
        await show()
    }

    public func closeList() {
        isListOpen = false
        likers = []
    }

    private func show() async {
        shown += 1
        let current = shown
        let reader = client.uid
        // The line names three at most (the reader's own like reads "you").
        var needed = Array(uids.filter { $0 != reader }.prefix(PeopleWords.named + 1))
        if isListOpen { needed += uids.prefix(maxListed) }
        await readNames(needed)
        guard current == shown else { return }
        // The count, the line and the list change together.
        total = uids.count
        line = PeopleWords.likedBy(uids, nameOf: name(of:), reader: reader)
        likers = isListOpen ? uids.prefix(maxListed).map { Liker(uid: $0, name: name(of: $0), isReader: $0 == reader) } : []
    }

    private func name(of uid: String) -> String { names[uid] ?? "Someone" }

    /// Reads the names not read yet, several at once (a missing or unreadable one is "Someone").
    private func readNames(_ wanted: [String]) async {
        let missing = Array(Set(wanted.filter { names[$0] == nil }))
        guard !missing.isEmpty else { return }
        let root = client.database.root
        let read = await withTaskGroup(of: (String, String).self) { group in
            for uid in missing {
                group.addTask {
                    let name = try? await root.child("people/\(uid)/full_name").getData().string
                    return (uid, name.flatMap { $0.isEmpty ? nil : $0 } ?? "Someone")
                }
            }
            var read: [String: String] = [:]
            for await (uid, name) in group { read[uid] = name }
            return read
        }
        names.merge(read) { old, _ in old }
    }
}
