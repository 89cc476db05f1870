import Foundation
import HearthCore
import Synchronization

/// A Hearth database, kept in sync over one realtime connection (Firebase's protocol), with
/// the device's own copy of what it listened to and of the writes it has not had acknowledged.
///
/// ```swift
/// let auth = Auth(url: server)
/// let database = Database(url: server, auth: auth, cacheURL: appSupport.appending(path: "hearth.sqlite"))
/// let post = database.root.child("posts").childByAutoId()
/// post.setValue(["title": "Hello"])        // shown at once, sent when online, kept across restarts
/// for try await event in database.root.child("posts").queryLimited(toLast: 20).observe(.childAdded) { … }
/// ```
///
/// All listeners share the one connection; equal queries share one server listen and one
/// local view. Writes appear in listeners at once (Firebase's optimistic events), are saved
/// in the cache file before the call returns, and are sent in order whenever the connection
/// is up. With a `cacheURL`, listened data is kept too, so listeners get their data at once
/// on the next launch, even with the server unreachable.
public final class Database: Sendable {
    /// The server, such as `http://127.0.0.1:9000`.
    public let url: URL
    /// The database name (`ns=`), or nil for the server's default.
    public let namespace: String?
    let credentials: Credentials
    let clock: @Sendable () -> Int64
    private let pushIDs: Mutex<PushIDState>
    let engine: SyncEngine
    private let credentialObserver: UUID?

    /// Who requests speak for.
    enum Credentials: Sendable {
        case none
        /// The signed-in user of an ``Auth``, with fresh ID tokens.
        case auth(Auth)
        /// A fixed token: an admin credential or an ID token.
        case token(String)
    }

    private struct PushIDState {
        var generator = PushIDGenerator()
        var random: any RandomNumberGenerator
    }

    /// - Parameters:
    ///   - url: the server.
    ///   - namespace: the database name, when not the server's default.
    ///   - auth: whose ID token the connection carries (none: signed out).
    ///   - cacheURL: the SQLite file keeping listened data and pending writes across launches
    ///     (nil: in memory only, as Firebase's SDKs without persistence).
    ///   - callbackQueue: where listeners are called (in order); a private serial queue by default.
    ///   - clock: milliseconds since the epoch, for push IDs and server values shown locally.
    ///   - random: randomness for push IDs.
    public convenience init(
        url: URL, namespace: String? = nil, auth: Auth? = nil, cacheURL: URL? = nil,
        callbackQueue: DispatchQueue? = nil,
        clock: @escaping @Sendable () -> Int64 = Database.systemClock,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.init(
            url: url, namespace: namespace, credentials: auth.map(Credentials.auth) ?? .none, cacheURL: cacheURL,
            callbackQueue: callbackQueue, clock: clock, random: random)
    }

    /// A database whose connection carries `token`: the server's admin token (rules do not
    /// apply), or an ID token.
    public convenience init(url: URL, namespace: String? = nil, token: String, cacheURL: URL? = nil) {
        self.init(url: url, namespace: namespace, credentials: .token(token), cacheURL: cacheURL, callbackQueue: nil)
    }

    init(
        url: URL, namespace: String?, credentials: Credentials, cacheURL: URL?, callbackQueue: DispatchQueue?,
        clock: @escaping @Sendable () -> Int64 = Database.systemClock,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.url = url
        self.namespace = namespace
        self.credentials = credentials
        self.clock = clock
        self.pushIDs = Mutex(PushIDState(random: random))
        let socketBase = Self.socketURL(url, namespace: namespace)
        let token: @Sendable (Bool) async -> String? = { forceRefresh in
            switch credentials {
            case .none: return nil
            case .token(let token): return token
            case .auth(let auth): return try? await auth.idToken(forceRefresh: forceRefresh)
            }
        }
        let cache = cacheURL.flatMap { try? LocalCache(url: $0, clock: clock) }
        engine = SyncEngine(
            socketURL: { session in session.map { socketBase + "&ls=" + $0 } ?? socketBase }, token: token, clock: clock,
            cache: cache, callbackQueue: callbackQueue ?? DispatchQueue(label: "hearth.database.callbacks"))
        if case .auth(let auth) = credentials {
            // Sign-in, sign-out and new tokens change who the connection speaks for.
            credentialObserver = auth.addCredentialObserver { [weak engine] in engine?.credentialChanged() }
        } else {
            credentialObserver = nil
        }
        engine.start()
    }

    deinit {
        if case .auth(let auth) = credentials, let credentialObserver { auth.removeCredentialObserver(credentialObserver) }
        engine.stop()
    }

    public static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `ws://host:port/.ws?v=5&ns=…` for the server at `url`.
    static func socketURL(_ url: URL, namespace: String?) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasPrefix("https://") {
            text = "wss://" + text.dropFirst("https://".count)
        } else if text.hasPrefix("http://") {
            text = "ws://" + text.dropFirst("http://".count)
        }
        text += "/.ws?v=5"
        if let namespace { text += "&ns=" + (namespace.addingPercentEncoding(withAllowedCharacters: .queryValueAllowed) ?? namespace) }
        return text
    }

    /// The root of the tree (as the Quickstart design's `Database.root` shortcut).
    public var root: DatabaseReference { DatabaseReference(database: self, path: .root) }

    /// The reference at a `/`-separated path.
    public func reference(withPath path: String) -> DatabaseReference {
        root.child(path)
    }

    /// A new push ID: time-ordered, unique, made on this device as Firebase's SDKs do.
    func nextPushID() -> String {
        let now = clock()
        return pushIDs.withLock { state in state.generator.next(now: now, using: &state.random) }
    }

    // MARK: - Connection

    /// Closes the connection and keeps it closed: listeners go on with local data, writes wait.
    public func goOffline() { engine.goOffline() }

    /// Opens the connection again after ``goOffline()``.
    public func goOnline() { engine.goOnline() }

    /// True while the connection is open and authenticated (as `.info/connected`).
    public var isConnected: Bool { engine.isConnected }

    /// How many writes at, above or below `ref` the server has not acknowledged yet
    /// (shown as "waiting to be sent" by apps).
    public func pendingWriteCount(at ref: DatabaseReference) -> Int {
        engine.pendingWrites(touching: ref.path)
    }

    /// The connection's state and the writes waiting for the server, now.
    public var syncStatus: SyncStatus { engine.syncStatus }

    /// The sync status now and after every change (connecting, disconnecting, a write made
    /// or acknowledged), until the stream is dropped.
    public func observeSyncStatus() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = engine.addStatusObserver { continuation.yield($0) }
        continuation.onTermination = { [engine] _ in engine.removeStatusObserver(id) }
        return stream
    }

    /// Waits until every event caused so far has been handed to its listener.
    public func waitForPendingEvents() async {
        await withCheckedContinuation { continuation in engine.afterDelivery { continuation.resume() } }
    }
}

extension CharacterSet {
    /// Characters a path segment keeps unencoded.
    static let pathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.remove(charactersIn: "/?#%")
        return set
    }()

    /// Characters a query value keeps unencoded.
    static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#?/")
        return set
    }()
}
