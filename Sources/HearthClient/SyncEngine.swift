import Foundation
import HearthCore
import Synchronization

/// Keeps one database in sync over one realtime connection (docs/protocol.md §13): every
/// listener's view, every write (shown at once, saved, sent in order and again after
/// reconnecting until answered), transactions, onDisconnect operations and `.info`.
///
/// The decisions are the ``SyncCore``'s, which does no I/O; this class is the glue around it
/// (as Firebase's `Repo`): it runs the ``RealtimeConnection``, keeps the listeners' and
/// callers' closures by the numbers the core hands out, reads and writes the ``LocalCache``,
/// reads the clock, arms timers, and carries out the core's ``SyncAction``s.
///
/// Threading: the core and the closures are in one `Mutex`; every entry point takes it
/// briefly, asks the core, sends what it says and queues the events and answers it produced
/// before letting go. Events go to listeners on one serial `DispatchQueue` in the order they
/// were made, so listeners see Firebase's order even when called from many threads. User code
/// (listeners, transaction updates) never runs under the lock.
final class SyncEngine: Sendable {
    typealias Handler = @Sendable (ViewEvent) -> Void
    typealias CancelHandler = @Sendable (HearthClientError) -> Void
    typealias WriteCompletion = @Sendable (Result<Void, HearthClientError>) -> Void
    typealias GetCompletion = @Sendable (Result<Node, HearthClientError>) -> Void
    typealias TransactionCompletion = @Sendable (Result<(committed: Bool, value: Node), HearthClientError>) -> Void

    let socketURL: @Sendable (_ sessionID: String?) -> String
    let clock: @Sendable () -> Int64
    let cache: LocalCache?
    let connection: RealtimeConnection
    let state: Mutex<State>
    let callbacks: DispatchQueue

    /// A listener's callbacks.
    struct Listener: Sendable {
        let handler: Handler?
        let cancel: CancelHandler?
    }

    /// A transaction's update and completion.
    struct TransactionCallbacks: Sendable {
        let update: @Sendable (Node) -> Node?
        let completion: TransactionCompletion
    }

    struct State: Sendable {
        var core: SyncCore
        /// What the open socket sends, if one is open.
        var outbound: AsyncStream<String>.Continuation?
        var listeners: [Int: Listener] = [:]
        var writeCompletions: [Int64: WriteCompletion] = [:]
        var requestCompletions: [Int: WriteCompletion] = [:]
        var getCompletions: [Int64: GetCompletion] = [:]
        var transactions: [Int: TransactionCallbacks] = [:]
        var statusObservers: [Int: @Sendable (SyncStatus) -> Void] = [:]
        var nextStatusObserver = 1
    }

    init(
        socketURL: @escaping @Sendable (String?) -> String, token: @escaping @Sendable (Bool) async -> String?,
        clock: @escaping @Sendable () -> Int64, cache: LocalCache?, callbackQueue: DispatchQueue
    ) {
        self.socketURL = socketURL
        self.clock = clock
        self.cache = cache
        self.callbacks = callbackQueue
        self.connection = RealtimeConnection(token: token)
        // Writes left from an earlier run come back first, shown and queued in their order.
        let saved = (try? cache?.savedWrites()) ?? []
        self.state = Mutex(State(core: SyncCore(savedWrites: saved, hasCache: cache != nil)))
    }

    /// Starts the connection (once).
    func start() {
        connection.start(delegate: self)
    }

    // MARK: - Listeners

    /// Adds a listener for `types` of the view of `query` at `path`; its first events come at once
    /// from what is known (the device's cache included). Returns the registration's ID.
    func addListener(
        path: Path, query: Query?, types: Set<DataEventType>, handler: Handler?, cancel: CancelHandler?
    ) -> Int {
        perform { state in
            let cached = cachedData(path: path, query: query, state.core)
            let (id, actions) = state.core.addListener(path: path, query: query, types: types, cached: cached)
            state.listeners[id] = Listener(handler: handler, cancel: cancel)
            return (id, actions)
        }
    }

    /// Keeps the view of `query` at `path` listened without callbacks (`keepSynced`).
    func keepSynced(path: Path, query: Query?, _ keep: Bool) {
        perform { state in
            let kept = state.core.keptSynced[ViewKey(path: path, query: query)] != nil
            let cached = keep && !kept ? cachedData(path: path, query: query, state.core) : nil
            return ((), state.core.keepSynced(path: path, query: query, keep, cached: cached))
        }
    }

    func removeListener(_ id: Int) {
        perform { state in
            state.listeners[id] = nil
            return ((), state.core.removeListener(id))
        }
    }

    /// The cache's data for a new view, when the core wants it.
    private func cachedData(path: Path, query: Query?, _ core: SyncCore) -> Node? {
        guard let cache, let key = core.cacheKeyToLoad(path: path, query: query) else { return nil }
        return try? cache.completeData(for: key)
    }

    // MARK: - Writes

    /// Shows a write at once, saves it, and sends it when connected; `completion` gets the server's answer.
    @discardableResult
    func write(_ path: Path, _ change: PendingWrite.Change, completion: WriteCompletion?) -> Result<Int64, HearthClientError> {
        perform { state in
            let (result, actions) = state.core.write(path, change, now: clock())
            if case .success(let id) = result, let completion { state.writeCompletions[id] = completion }
            return (result, actions)
        }
    }

    /// Sends an onDisconnect request (`o`, `om`, `oc`) now, or when the connection is ready.
    func request(_ action: String, body: String, completion: WriteCompletion?) {
        perform { state in
            let (id, actions) = state.core.request(action, body: body)
            if let completion { state.requestCompletions[id] = completion }
            return ((), actions)
        }
    }

    /// Reads the value of `query` at `path`: from a complete local view when there is one,
    /// else from the server (`g`), else from the device's cache; offline without any, an error.
    func get(path: Path, query: Query?, completion: @escaping GetCompletion) {
        let start = perform { state in
            var cacheHasCopy = false
            if let cache, state.core.needsCacheCheck(forGet: path, query: query) {
                cacheHasCopy = (try? cache.completeData(for: ViewKey(path: path, query: query))) != nil
            }
            let (start, actions) = state.core.get(path: path, query: query, cacheHasCopy: cacheHasCopy)
            if case .sent(let id) = start { state.getCompletions[id] = completion }
            return (start, actions)
        }
        switch start {
        case .answered(let node): completion(.success(node))
        case .sent: break
        case .offline(let key): getFromCache(key, completion: completion)
        }
    }

    func getFromCache(_ key: ViewKey, completion: GetCompletion) {
        if let cached = try? cache?.completeData(for: key) { return completion(.success(cached)) }
        completion(.failure(HearthClientError(.offline, "The client is offline and holds no copy of this data.")))
    }

    // MARK: - Transactions

    /// Runs `update` on the value at `path` as this device knows it, shows the result (unless
    /// not `applyLocally`), and sends it on the condition that the server's value is the one
    /// `update` saw; when another writer got there first, runs it again on their value.
    func transaction(
        at path: Path, applyLocally: Bool, update: @escaping @Sendable (Node) -> Node?, completion: @escaping TransactionCompletion
    ) {
        // The first run happens here, in the caller, when it can start at once.
        perform(transactionsInline: true) { state in
            let cached = cachedData(path: path, query: nil, state.core)
            let (id, actions) = state.core.startTransaction(at: path, applyLocally: applyLocally, cached: cached)
            state.transactions[id] = TransactionCallbacks(update: update, completion: completion)
            return ((), actions)
        }
    }

    // MARK: - Connection

    func goOffline() {
        perform { state in ((), state.core.setOnline(false)) }
        connection.wake()
    }

    func goOnline() {
        perform { state in ((), state.core.setOnline(true)) }
        connection.wake()
    }

    /// The credential changed (sign-in, sign-out, a new token): nothing more is sent until the
    /// connection has authenticated again, so later writes are judged as the new user.
    func credentialChanged() {
        perform { state in ((), state.core.credentialChanged()) }
    }

    /// Ends the connection for good (the database is going away); saves queued server data.
    func stop() {
        perform { state in ((), state.core.stop()) }
        connection.stop()
    }

    // MARK: - Delivery

    /// Calls `observer` with the connection and pending writes now and at every change.
    func addStatusObserver(_ observer: @escaping @Sendable (SyncStatus) -> Void) -> Int {
        state.withLock { state in
            let id = state.nextStatusObserver
            state.nextStatusObserver += 1
            state.statusObservers[id] = observer
            let status = state.core.observeStatus()
            callbacks.async { observer(status) }
            return id
        }
    }

    func removeStatusObserver(_ id: Int) {
        state.withLock { state in
            state.statusObservers[id] = nil
            if state.statusObservers.isEmpty { state.core.stopObservingStatus() }
        }
    }

    /// Runs after every event queued so far has been delivered.
    func afterDelivery(_ action: @escaping @Sendable () -> Void) {
        callbacks.async(execute: action)
    }

    // MARK: - Reading

    /// What this device shows at `path` and whether it is complete.
    func visible(at path: Path) -> KnownNode {
        state.withLock { $0.core.visible(at: path) }
    }

    /// True while the connection is open and ready.
    var isConnected: Bool { state.withLock { $0.core.isReady } }

    var syncStatus: SyncStatus { state.withLock { $0.core.status } }

    /// The IDs of writes not yet acknowledged touching `path` (at, above or below).
    func pendingWrites(touching path: Path) -> Int {
        state.withLock { $0.core.pendingWrites(touching: path) }
    }
}
