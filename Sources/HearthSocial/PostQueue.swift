import Foundation
import HearthClient

/// Posts with photos made while the server cannot be reached. The database keeps a post's
/// write offline by itself, but photos are files: the post and its photos' bytes are kept on
/// this device (``PostQueueStore``, a folder per person) and sent when the connection is back —
/// the photos first, then the post in its one atomic write, so nobody ever sees a post whose
/// photos are not there yet. The same design as the web app's `app/post-queue.js`.
///
/// Sending again after an interruption (the app quit, the connection lost mid-way) uploads the
/// same files and finds the post already written rather than writing it twice. One send runs at
/// a time; only the signed-in author sends their posts. A post the server refuses is dropped
/// with its files, and the refusal told to ``SocialClient``'s late refusals.
public actor PostQueue {
    /// At most this many posts wait (each with up to three photos of up to 5 MB).
    public static let maxPosts = 10

    private let store: PostQueueStore
    private let database: Database
    private let storage: Storage
    private let auth: Auth
    private let refusals: AsyncStream<String>.Continuation
    private let clock: @Sendable () -> Int64

    /// Whose posts are loaded (the signed-in person's, as of the last ``resume()`` or ``add``).
    private var uid: String?
    private var posts: [QueuedPost] = []
    private var observers: [UUID: AsyncStream<[QueuedPost]>.Continuation] = [:]
    private var sending: Task<Void, Never>?
    /// Follows the connection while posts wait, to send them when it is back.
    private var watcher: Task<Void, Never>?

    init(
        folder: URL, database: Database, storage: Storage, auth: Auth, refusals: AsyncStream<String>.Continuation,
        clock: @escaping @Sendable () -> Int64
    ) {
        store = PostQueueStore(folder: folder)
        self.database = database
        self.storage = storage
        self.auth = auth
        self.refusals = refusals
        self.clock = clock
    }

    /// The signed-in person's waiting posts, oldest first: now, then after every change.
    public func changes() -> AsyncStream<[QueuedPost]> {
        let (stream, continuation) = AsyncStream<[QueuedPost]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        observers[id] = continuation
        continuation.yield(posts)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.forget(id) }
        }
        return stream
    }

    /// The signed-in person's waiting posts, oldest first (read from the device first when
    /// someone else was signed in at the last look).
    public func waitingPosts() -> [QueuedPost] {
        followSignedInPerson()
        return posts
    }

    /// Loads the signed-in person's waiting posts (after a launch, or another sign-in) and
    /// sends them once the server can be reached.
    public func resume() {
        followSignedInPerson()
        watchIfWaiting()
    }

    /// Keeps a post to send when the connection is back: `id` is its push ID, `photos` its
    /// photos in order.
    /// - Throws: ``SocialError`` when nobody is signed in, too many posts wait already, or it
    ///   cannot be kept on this device.
    @discardableResult
    func add(id: String, title: String, body: String, photos: [ComposeViewModel.PhotoDraft]) throws -> QueuedPost {
        followSignedInPerson()
        guard let uid else { throw SocialError.notSignedIn }
        guard posts.count < Self.maxPosts else {
            throw SocialError.invalid("\(Self.maxPosts) posts are already waiting to be sent. Try again when the connection is back.")
        }
        let post = QueuedPost(
            id: id, uid: uid, title: title, body: body,
            photos: photos.map { QueuedPost.QueuedPhoto(contentType: $0.contentType, alt: $0.alt.trimmingCharacters(in: .whitespacesAndNewlines)) },
            queuedAt: clock())
        let kept: QueuedPost
        do {
            kept = try store.keep(post, photos: photos.map { ($0.full, $0.thumbnail) })
        } catch {
            throw SocialError.failed("The post could not be kept on this device: \(error.localizedDescription)")
        }
        posts.append(kept)
        changed()
        watchIfWaiting()
        return kept
    }

    /// Gives up on a waiting post; its files, if some were sent already, are removed.
    public func cancel(_ id: String) async {
        guard let post = posts.first(where: { $0.id == id }) else { return }
        drop(post)
        await storage.removeFiles(of: post.photoPaths)
    }

    /// Sends what waits, oldest first; returns when done or when the server cannot be reached
    /// (what is left waits for the next connection). A write made while the connection is
    /// gone waits for it to come back.
    public func send() async {
        if let sending { return await sending.value }
        let task = Task { await sendAll() }
        sending = task
        await task.value
        sending = nil
    }

    // MARK: - Sending

    private func sendAll() async {
        followSignedInPerson()
        // Called when the connection came (or by the app): a failure to reach the server ends
        // the round, rather than a connection flag that may lag the status that woke it.
        while let post = posts.first {
            do {
                try await sendOne(post)
                drop(post)
            } catch where !(error is SocialError) && SocialError.isRefusal(error) {
                drop(post)
                await storage.removeFiles(of: post.photoPaths)
                refusals.yield("A post made offline was refused: \(SocialError.words(for: error))")
            } catch {
                // Not reachable (or signed out meanwhile): it waits for the next connection.
                return
            }
        }
    }

    private func sendOne(_ post: QueuedPost) async throws {
        guard let user = auth.currentUser, user.uid == post.uid else { throw SocialError.notSignedIn }
        let published = post.post(by: Author(user: user))
        for (index, photo) in post.photos.enumerated() {
            let bytes = try store.photo(index, of: post)
            try await storage.reference(published.photos[index].full).putData(bytes.full, contentType: photo.contentType)
            try await storage.reference(published.photos[index].thumb).putData(bytes.thumbnail, contentType: photo.contentType)
        }
        do {
            try await database.root.updateChildValues(try PostActions.publishing(published)).acknowledged()
        } catch {
            // Written by an earlier send whose answer was lost: that one is sent.
            let author = try? await database.root.child("posts/\(post.id)/author/uid").getData().string
            if author != post.uid { throw error }
        }
    }

    // MARK: - State

    private func followSignedInPerson() {
        let current = auth.currentUser?.uid
        guard current != uid else { return }
        uid = current
        posts = current.map(store.posts(of:)) ?? []
        changed()
    }

    private func drop(_ post: QueuedPost) {
        posts.removeAll { $0.id == post.id }
        store.remove(post)
        changed()
    }

    private func changed() {
        for observer in observers.values { observer.yield(posts) }
    }

    private func forget(_ id: UUID) {
        observers[id] = nil
    }

    /// Follows the connection while posts wait, sending them each time it comes back; stops
    /// once none wait.
    private func watchIfWaiting() {
        guard watcher == nil, !posts.isEmpty else { return }
        let statuses = database.observeSyncStatus()
        watcher = Task {
            for await status in statuses {
                if status.isConnected { await send() }
                if !hasWaiting() { break }
            }
            watcherEnded()
        }
    }

    private func hasWaiting() -> Bool {
        followSignedInPerson()
        return !posts.isEmpty
    }

    private func watcherEnded() {
        watcher = nil
        // A post added while it was ending still needs one.
        watchIfWaiting()
    }
}
