import HearthCore

/// The sync logic of one database, free of I/O: it takes local calls (listen, write, read,
/// transaction) and the server's messages, keeps the ``SyncTree`` and the protocol's
/// bookkeeping (request numbers, listens and their tags, unanswered writes), and answers with
/// ``SyncAction``s: messages to send, events to deliver, cache updates, timers to arm.
///
/// It reads no clock (the time is passed in), starts no task and holds no callback: the
/// ``SyncEngine`` around it runs the socket, keeps the listeners' and callers' closures by
/// the numbers the core hands out, and carries out the actions. So every behaviour here can be
/// driven in a test with hand-written messages, or replayed from a recorded session.
struct SyncCore: Sendable {
    /// The connection as the core sees it.
    enum Link: Sendable, Equatable {
        case offline
        /// A socket is opening (the handshake has not come yet).
        case connecting
        /// The handshake came; `ready` once authenticated and restored.
        case open(ready: Bool)
    }

    /// A request awaiting its answer.
    enum Request: Sendable {
        case listen(ViewKey)
        case write(Int64)
        case auth
        /// An onDisconnect request, by the number ``request(_:body:)`` returned.
        case other(Int)
        case get(ViewKey)
    }

    /// A transaction in progress.
    struct Transaction: Sendable {
        let path: Path
        let applyLocally: Bool
        let registration: Int
        var attempts = 0
        /// True until its first run was asked for (it waits for its location's value).
        var waiting: Bool
    }

    /// How a read is answered at once, or that it went to the server.
    enum GetStart: Sendable {
        /// From a complete local view.
        case answered(Node)
        /// Sent, or queued until the connection is ready (see ``SyncTimer/getTimeout(_:)``):
        /// the answer comes as ``SyncAction/completeGet(_:_:)`` with this number.
        case sent(Int64)
        /// Offline by request (or not connected, with a copy in the cache): the cache answers.
        case offline(ViewKey)
    }

    /// How long a read waits for the connection before the cache answers, and a transaction
    /// for its location's value before running on what is known (as Firebase's SDKs).
    static let connectTimeout: Duration = .seconds(3)
    static let maxTransactionAttempts = 25
    /// Server data waits this long to be saved in one batch.
    static let cacheFlushDelay: Duration = .milliseconds(50)

    var tree = SyncTree()
    var link = Link.offline
    /// False after goOffline (and for good after ``stop()``).
    var online = true
    /// The session to name when reconnecting.
    var sessionID: String?
    var serverTimeOffset: Int64 = 0
    /// Whether a device cache exists (server data is queued for it only then).
    let hasCache: Bool

    var nextRegistration = 1
    var nextRequest: Int64 = 1
    var nextWrite: Int64 = 1
    var nextTag: Int64 = 1
    /// Numbers for onDisconnect requests and transactions.
    var nextCallback = 1
    /// Listens the server has (or has been asked for) on the current connection.
    var listens: [ViewKey: Int64?] = [:]
    var tags: [Int64: ViewKey] = [:]
    var requests: [Int64: Request] = [:]
    /// onDisconnect requests made while not ready, sent when the connection is.
    var queuedRequests: [(callback: Int, action: String, body: String)] = []
    /// Reads waiting for the connection.
    var queuedGets: [(id: Int64, message: String)] = []
    /// The registrations that keep views synced without listeners.
    var keptSynced: [ViewKey: Int] = [:]
    var cacheUpdates: [LocalCache.CacheUpdate] = []
    var cacheFlushArmed = false
    var authenticatedToken: String?
    /// Writes sent on the current connection (the rest go when it is ready).
    var sentWrites: Set<Int64> = []
    var transactions: [Int: Transaction] = [:]
    /// The transaction each transaction write belongs to.
    var transactionWrites: [Int64: Int] = [:]
    /// The transaction each transaction's registration (the listen that keeps its value here) belongs to.
    var transactionRegistrations: [Int: Int] = [:]
    var statusObserved = false
    var lastStatus = SyncStatus(isConnected: false, pendingWriteCount: 0, pendingWritePaths: [])

    /// - Parameters:
    ///   - savedWrites: writes left from an earlier run (from the device's cache), oldest first:
    ///     shown at once and sent in their order.
    ///   - hasCache: whether server data should be queued for a device cache.
    init(savedWrites: [LocalCache.SavedWrite] = [], hasCache: Bool = false) {
        self.hasCache = hasCache
        _ = tree.setInfo("connected", .bool(false))
        _ = tree.setInfo("serverTimeOffset", .int(0))
        for write in savedWrites {
            _ = tree.addWrite(PendingWrite(id: write.id, path: write.path, change: write.change, local: write.local))
            nextWrite = max(nextWrite, write.id + 1)
        }
    }

    // MARK: - Listeners

    /// The view whose data the device's cache should be asked for before
    /// ``addListener(path:query:types:cached:)``: nil when no such read is useful (no cache,
    /// the view exists, `.info`, or the data is here already).
    func cacheKeyToLoad(path: Path, query: Query?) -> ViewKey? {
        let key = ViewKey(path: path, query: query)
        guard hasCache, tree.views[key] == nil, !SyncTree.infoPath.contains(path), !tree.isCovered(path) else { return nil }
        return key
    }

    /// Adds a listener for `types` of the view of `query` at `path`; its first events come at
    /// once from what is known, `cached` (the cache's complete data for the view) included.
    /// Returns the registration's number.
    mutating func addListener(path: Path, query: Query?, types: Set<DataEventType>, cached: Node?) -> (Int, [SyncAction]) {
        var actions: [SyncAction] = []
        let id = nextRegistration
        nextRegistration += 1
        register(id, path: path, query: query, types: types, cached: cached, &actions)
        return (id, actions)
    }

    mutating func register(
        _ id: Int, path: Path, query: Query?, types: Set<DataEventType>, cached: Node?, _ actions: inout [SyncAction]
    ) {
        let key = ViewKey(path: path, query: query)
        if let cached, cacheKeyToLoad(path: path, query: query) != nil {
            // A filtered view's window waits in the tree until the view is made.
            emit(key.isDefault ? tree.applyCached(cached, at: path, complete: true) : tree.applyCached(window: cached, for: key), &actions)
        }
        emit(tree.addRegistration(Registration(id: id, types: types), path: path, query: query), &actions)
        syncListens(&actions)
    }

    /// Keeps the view of `query` at `path` listened without listeners (`keepSynced`), or stops.
    mutating func keepSynced(path: Path, query: Query?, _ keep: Bool, cached: Node?) -> [SyncAction] {
        let key = ViewKey(path: path, query: query)
        if keep {
            guard keptSynced[key] == nil else { return [] }
            let (id, actions) = addListener(path: path, query: query, types: [], cached: cached)
            keptSynced[key] = id
            return actions
        }
        guard let id = keptSynced.removeValue(forKey: key) else { return [] }
        return removeListener(id)
    }

    mutating func removeListener(_ id: Int) -> [SyncAction] {
        var actions: [SyncAction] = []
        tree.removeRegistration(id)
        syncListens(&actions)
        return actions
    }

    // MARK: - Timers

    /// A timer armed by ``SyncAction/arm(_:after:)`` went off.
    mutating func timerFired(_ timer: SyncTimer) -> [SyncAction] {
        switch timer {
        case .cacheFlush:
            let batch = takeCacheBatch()
            return batch.isEmpty ? [] : [.saveCache(batch)]
        case .getTimeout(let id):
            guard let index = queuedGets.firstIndex(where: { $0.id == id }) else { return [] }
            queuedGets.remove(at: index)
            guard case .get(let key)? = requests.removeValue(forKey: id) else { return [] }
            return [.answerGetFromCache(id, key)]
        case .transactionStart(let id):
            guard transactions[id]?.waiting == true else { return [] }
            transactions[id]?.waiting = false
            return [.runTransaction(id)]
        }
    }

    // MARK: - Reading

    /// True while the connection is open and ready.
    var isReady: Bool { link == .open(ready: true) }

    /// What this device shows at `path` and whether it is complete.
    func visible(at path: Path) -> KnownNode { tree.visible(at: path) }

    /// The writes not yet acknowledged touching `path` (at, above or below).
    func pendingWrites(touching path: Path) -> Int {
        tree.writes.filter { $0.touches(path) }.count
    }

    var status: SyncStatus {
        let paths = tree.writes.flatMap { write -> [String] in
            switch write.change {
            case .set: return [write.path.description]
            case .merge(let children): return children.map { write.path.appending($0.path).description }
            }
        }
        return SyncStatus(isConnected: isReady, pendingWriteCount: tree.writes.count, pendingWritePaths: paths)
    }

    /// The status now, for a new observer; from now on changes come as ``SyncAction/status(_:)``.
    mutating func observeStatus() -> SyncStatus {
        statusObserved = true
        lastStatus = status
        return lastStatus
    }

    /// Nobody follows the status any more.
    mutating func stopObservingStatus() {
        statusObserved = false
    }

    // MARK: - Delivery

    /// Queues events for listeners. A transaction's own registration has no listener: its
    /// first value starts the transaction's first run when it waits for one.
    mutating func emit(_ events: [ViewEvent], _ actions: inout [SyncAction]) {
        guard !events.isEmpty else { return }
        var delivered: [ViewEvent] = []
        var started: [Int] = []
        for event in events {
            guard let id = transactionRegistrations[event.registration] else {
                delivered.append(event)
                continue
            }
            if event.type == .value, transactions[id]?.waiting == true {
                transactions[id]?.waiting = false
                started.append(id)
            }
        }
        if !delivered.isEmpty { actions.append(.deliver(delivered)) }
        for id in started { actions.append(.runTransaction(id)) }
    }

    /// Tells the status observers when the connection or the pending writes changed.
    mutating func publishStatus(_ actions: inout [SyncAction]) {
        // Computing the status lists every pending write: only when someone follows it.
        guard statusObserved else { return }
        let status = status
        guard status != lastStatus else { return }
        lastStatus = status
        actions.append(.status(status))
    }

    // MARK: - Errors

    static func error(status: String, message: String) -> HearthClientError {
        switch status {
        case "permission_denied": return HearthClientError(.permissionDenied, message.isEmpty ? "Permission denied" : message)
        case "datastale": return HearthClientError(.transactionConflict, message.isEmpty ? "The data changed." : message)
        default: return HearthClientError(.badRequest, message.isEmpty ? status : message)
        }
    }

    static func text(_ node: Node) -> String {
        if case .string(let text) = node { return text }
        return ""
    }
}
