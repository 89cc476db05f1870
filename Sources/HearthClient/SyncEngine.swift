import Foundation
import HearthCore
import Synchronization

/// Keeps one database in sync over one realtime connection (docs/protocol.md): every listener's
/// view, every write (shown at once, saved, sent in order and again after reconnecting until
/// answered), transactions, onDisconnect operations and `.info`.
///
/// Threading: all state is in one `Mutex`; every entry point takes it briefly, changes the
/// ``SyncTree`` and queues what to send and the events to deliver before letting go. Events
/// go to listeners on one serial `DispatchQueue` in the order they were made, so listeners
/// see Firebase's order even when called from many threads. User code (listeners, transaction
/// updates) never runs under the lock. The socket runs in one task (``RealtimeSocket``).
final class SyncEngine: Sendable {
    typealias Handler = @Sendable (ViewEvent) -> Void
    typealias CancelHandler = @Sendable (HearthClientError) -> Void
    typealias WriteCompletion = @Sendable (Result<Void, HearthClientError>) -> Void

    let socketURL: @Sendable (_ sessionID: String?) -> String
    let token: @Sendable (_ forceRefresh: Bool) async -> String?
    let clock: @Sendable () -> Int64
    let cache: LocalCache?
    private let state: Mutex<State>
    private let callbacks: DispatchQueue
    private let wakeup = Wakeup()
    private let started = Mutex(false)

    /// A listener's callbacks.
    struct Listener: Sendable {
        let handler: Handler?
        let cancel: CancelHandler?
    }

    /// A request awaiting its answer.
    enum Request: Sendable {
        case listen(ViewKey)
        case write(Int64)
        case auth
        case other(WriteCompletion?)
        case get(@Sendable (Result<Node, HearthClientError>) -> Void)
    }

    /// A transaction in progress.
    struct Transaction: Sendable {
        let path: Path
        let update: @Sendable (Node) -> Node?
        let applyLocally: Bool
        let registration: Int
        var attempts: Int
        let completion: @Sendable (Result<(committed: Bool, value: Node), HearthClientError>) -> Void
    }

    enum Link: Sendable {
        case offline
        /// A socket is opening (the handshake has not come yet).
        case connecting(AsyncStream<String>.Continuation)
        /// The handshake came; `ready` once authenticated and restored.
        case open(AsyncStream<String>.Continuation, ready: Bool)

        var outbound: AsyncStream<String>.Continuation? {
            switch self {
            case .offline: return nil
            case .connecting(let outbound), .open(let outbound, _): return outbound
            }
        }
    }

    struct State: Sendable {
        var tree = SyncTree()
        var listeners: [Int: Listener] = [:]
        var nextRegistration = 1
        var nextRequest: Int64 = 1
        var nextWrite: Int64 = 1
        var nextTag: Int64 = 1
        var link = Link.offline
        var online = true
        var sessionID: String?
        /// Listens the server has (or has been asked for) on the current connection.
        var listens: [ViewKey: Int64?] = [:]
        var tags: [Int64: ViewKey] = [:]
        var requests: [Int64: Request] = [:]
        var writeCompletions: [Int64: WriteCompletion] = [:]
        var transactions: [Int64: Transaction] = [:]
        /// onDisconnect requests made while offline, sent when the connection is ready.
        var queuedRequests: [(action: String, body: String, completion: WriteCompletion?)] = []
        /// Reads waiting for the connection.
        var queuedGets: [(id: Int64, message: String)] = []
        var serverTimeOffset: Int64 = 0
        /// The registrations that keep views synced without listeners.
        var keptSynced: [ViewKey: Int] = [:]
        var cacheUpdates: [LocalCache.CacheUpdate] = []
        var cacheFlushScheduled = false
        var authenticatedToken: String?
        /// Handshakes on the current socket (to reset the backoff once one opened).
        var handshakes = 0
        /// Writes sent on the current connection (the rest go when it is ready).
        var sentWrites: Set<Int64> = []
        var stopped = false
        var statusObservers: [Int: @Sendable (SyncStatus) -> Void] = [:]
        var lastStatus = SyncStatus(isConnected: false, pendingWriteCount: 0, pendingWritePaths: [])

        var status: SyncStatus {
            let paths = tree.writes.flatMap { write -> [String] in
                switch write.change {
                case .set: return [write.path.description]
                case .merge(let children): return children.map { write.path.appending($0.path).description }
                }
            }
            return SyncStatus(isConnected: isReady, pendingWriteCount: tree.writes.count, pendingWritePaths: paths)
        }

        var isReady: Bool {
            if case .open(_, true) = link { return true }
            return false
        }
    }

    init(
        socketURL: @escaping @Sendable (String?) -> String, token: @escaping @Sendable (Bool) async -> String?,
        clock: @escaping @Sendable () -> Int64, cache: LocalCache?, callbackQueue: DispatchQueue
    ) {
        self.socketURL = socketURL
        self.token = token
        self.clock = clock
        self.cache = cache
        self.callbacks = callbackQueue
        var initial = State()
        _ = initial.tree.setInfo("connected", .bool(false))
        _ = initial.tree.setInfo("serverTimeOffset", .int(0))
        // Writes left from an earlier run come back first, shown and queued in their order.
        if let saved = try? cache?.savedWrites() {
            for write in saved {
                _ = initial.tree.addWrite(PendingWrite(id: write.id, path: write.path, change: write.change, local: write.local))
                initial.nextWrite = max(initial.nextWrite, write.id + 1)
            }
        }
        self.state = Mutex(initial)
    }

    /// Starts the connection (once).
    func start() {
        guard started.withLock({ started in defer { started = true }; return !started }) else { return }
        Task.detached { [weak self] in await self?.runConnection() }
    }

    // MARK: - Listeners

    /// Adds a listener for `types` of the view of `query` at `path`; its first events come at once
    /// from what is known (the device's cache included). Returns the registration's ID.
    func addListener(
        path: Path, query: Query?, types: Set<DataEventType>, handler: Handler?, cancel: CancelHandler?
    ) -> Int {
        let id = state.withLock { state -> Int in
            let id = state.nextRegistration
            state.nextRegistration += 1
            state.listeners[id] = Listener(handler: handler, cancel: cancel)
            let key = ViewKey(path: path, query: query)
            if state.tree.views[key] == nil, let cached = loadCached(key, state: &state) {
                emit(cached, state)
            }
            let events = state.tree.addRegistration(Registration(id: id, types: types), path: path, query: query)
            emit(events, state)
            syncListens(&state)
            return id
        }
        return id
    }

    /// Keeps the view of `query` at `path` listened without callbacks (`keepSynced`).
    func keepSynced(path: Path, query: Query?, _ keep: Bool) {
        let key = ViewKey(path: path, query: query)
        if keep {
            guard state.withLock({ $0.keptSynced[key] == nil }) else { return }
            let id = addListener(path: path, query: query, types: [], handler: nil, cancel: nil)
            let extra = state.withLock { state -> Int? in
                guard state.keptSynced[key] == nil else { return id }
                state.keptSynced[key] = id
                return nil
            }
            if let extra { removeListener(extra) }
        } else if let id = state.withLock({ $0.keptSynced.removeValue(forKey: key) }) {
            removeListener(id)
        }
    }

    func removeListener(_ id: Int) {
        state.withLock { state in
            state.listeners[id] = nil
            state.tree.removeRegistration(id)
            syncListens(&state)
        }
    }

    /// The cached data for a new view, applied to the tree as the server's until it answers.
    private func loadCached(_ key: ViewKey, state: inout State) -> [ViewEvent]? {
        guard let cache, !SyncTree.infoPath.contains(key.path), !state.tree.isCovered(key.path),
            let node = try? cache.completeData(for: key)
        else { return nil }
        if key.isDefault { return state.tree.applyCached(node, at: key.path, complete: true) }
        // A filtered view's window waits in the tree until the view is made.
        return state.tree.applyCached(window: node, for: key)
    }

    // MARK: - Writes

    /// Shows a write at once, saves it, and sends it when connected; `completion` gets the server's answer.
    @discardableResult
    func write(
        _ path: Path, _ change: PendingWrite.Change, hash: String? = nil, visible: Bool = true, persist: Bool = true,
        completion: WriteCompletion?
    ) -> Result<Int64, HearthClientError> {
        let result = state.withLock { state -> Result<Int64, HearthClientError> in
            let now = clock() + state.serverTimeOffset
            let local: PendingWrite.Change
            do throws(HearthError) {
                local = try resolve(change, at: path, now: now, tree: state.tree)
            } catch {
                return .failure(HearthClientError(.badRequest, error.message))
            }
            let id = state.nextWrite
            state.nextWrite += 1
            let write = PendingWrite(id: id, path: path, change: change, local: local, visible: visible, hash: hash)
            if persist, hash == nil { try? cache?.saveWrite(write) }
            if let completion { state.writeCompletions[id] = completion }
            emit(state.tree.addWrite(write), state)
            if state.isReady { send(write, state: &state) }
            publishStatus(&state)
            return .success(id)
        }
        return result
    }

    /// Server values resolved as the server would, from what this device shows and its
    /// estimate of the server's clock.
    private func resolve(_ change: PendingWrite.Change, at path: Path, now: Int64, tree: SyncTree) throws(HearthError) -> PendingWrite.Change {
        switch change {
        case .set(let node):
            return .set(try ServerValues.resolve(node, existing: tree.visible(at: path).node, now: now))
        case .merge(let children):
            var resolved: [(path: Path, value: Node)] = []
            for child in children {
                let existing = tree.visible(at: path.appending(child.path)).node
                resolved.append((child.path, try ServerValues.resolve(child.value, existing: existing, now: now)))
            }
            return .merge(resolved)
        }
    }

    private func send(_ write: PendingWrite, state: inout State) {
        state.sentWrites.insert(write.id)
        let id = state.nextRequest
        state.nextRequest += 1
        state.requests[id] = .write(write.id)
        var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(write.path))))]
        let action: String
        switch write.change {
        case .set(let node):
            action = "p"
            fields.append(("d", RealtimeMessage.json(node)))
        case .merge(let children):
            action = "m"
            fields.append(("d", RealtimeMessage.object(children.map {
                ($0.path.keys.map(\.string).joined(separator: "/"), RealtimeMessage.json($0.value))
            })))
        }
        if let hash = write.hash { fields.append(("h", RealtimeMessage.json(.string(hash)))) }
        state.link.outbound?.yield(RealtimeMessage.request(id: id, action: action, body: RealtimeMessage.object(fields)))
    }

    /// Sends an onDisconnect request (`o`, `om`, `oc`) now, or when the connection is ready.
    func request(_ action: String, body: String, completion: WriteCompletion?) {
        state.withLock { state in
            if state.isReady {
                sendRequest(action, body: body, completion: completion, state: &state)
            } else {
                state.queuedRequests.append((action, body, completion))
            }
        }
    }

    private func sendRequest(_ action: String, body: String, completion: WriteCompletion?, state: inout State) {
        let id = state.nextRequest
        state.nextRequest += 1
        state.requests[id] = .other(completion)
        state.link.outbound?.yield(RealtimeMessage.request(id: id, action: action, body: body))
    }

    /// Reads the value of `query` at `path`: from a complete local view when there is one,
    /// else from the server (`g`), else from the device's cache; offline without any, an error.
    func get(path: Path, query: Query?, completion: @escaping @Sendable (Result<Node, HearthClientError>) -> Void) {
        enum Answer { case local(Node), sent, waiting(Int64), offline }
        let key = ViewKey(path: path, query: query)
        let answer = state.withLock { state -> Answer in
            if let view = state.tree.views[key], view.result.complete { return .local(view.result.node) }
            if key.isDefault, case let known = state.tree.visible(at: path), known.complete { return .local(known.node) }
            // Not connected: the device's copy answers at once when it has one.
            guard state.online, state.isReady || (try? cache?.completeData(for: key)) == nil else { return .offline }
            let id = state.nextRequest
            state.nextRequest += 1
            state.requests[id] = .get { [weak self] result in
                // An unfiltered answer is kept, so the next launch can show it offline.
                if key.isDefault, case .success(let node) = result { self?.cacheAnswer(node, at: path) }
                completion(result)
            }
            let fields = [
                ("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(path)))), ("q", key.isDefault ? "{}" : key.identifier),
            ]
            let message = RealtimeMessage.request(id: id, action: "g", body: RealtimeMessage.object(fields))
            guard state.isReady else {
                state.queuedGets.append((id, message))
                return .waiting(id)
            }
            state.link.outbound?.yield(message)
            return .sent
        }
        switch answer {
        case .local(let node): completion(.success(node))
        case .sent: break
        case .waiting(let id):
            // As Firebase's SDKs: a read waits a few seconds for the connection, then settles for the cache.
            Task { [weak self] in
                try? await Task.sleep(for: Self.getConnectTimeout)
                guard let self else { return }
                let expired = self.state.withLock { state -> Bool in
                    guard let index = state.queuedGets.firstIndex(where: { $0.id == id }) else { return false }
                    state.queuedGets.remove(at: index)
                    state.requests[id] = nil
                    return true
                }
                if expired { self.getFromCache(key, completion: completion) }
            }
        case .offline:
            getFromCache(key, completion: completion)
        }
    }

    static let getConnectTimeout: Duration = .seconds(3)

    private func cacheAnswer(_ node: Node, at path: Path) {
        state.withLock { state in
            queueCache(.value(path, node), state: &state)
            queueCache(.complete(ViewKey(path: path, query: nil)), state: &state)
        }
    }

    private func getFromCache(_ key: ViewKey, completion: @Sendable (Result<Node, HearthClientError>) -> Void) {
        if let cached = try? cache?.completeData(for: key) { return completion(.success(cached)) }
        completion(.failure(HearthClientError(.offline, "The client is offline and holds no copy of this data.")))
    }

    // MARK: - Transactions

    /// Runs `update` on the value at `path` as this device knows it, shows the result (unless
    /// not `applyLocally`), and sends it on the condition that the server's value is the one
    /// `update` saw; when another writer got there first, runs it again on their value.
    func transaction(
        at path: Path, applyLocally: Bool, update: @escaping @Sendable (Node) -> Node?,
        completion: @escaping @Sendable (Result<(committed: Bool, value: Node), HearthClientError>) -> Void
    ) {
        // Connected without the value here, the first run waits for the server's value (a
        // few seconds at most) rather than guessing from nothing; offline, or with the value
        // known, it runs at once on what this device shows, as Firebase's SDKs do.
        let waiting = state.withLock { $0.isReady && !$0.tree.visible(at: path).complete }
        let firstRun = FirstRun { [weak self] registration in
            self?.attempt(Transaction(
                path: path, update: update, applyLocally: applyLocally, registration: registration, attempts: 0,
                completion: completion))
        }
        // The listen keeps the value here up to date while the transaction runs.
        var handler: Handler?
        if waiting { handler = { _ in firstRun.valueCame() } }
        let id = addListener(path: path, query: nil, types: waiting ? [.value] : [], handler: handler, cancel: nil)
        firstRun.registered(id)
        guard waiting else { return firstRun.start() }
        Task {
            try? await Task.sleep(for: Self.getConnectTimeout)
            firstRun.start()
        }
    }

    /// Starts a transaction's first run once: when its listen's first value came (which may be
    /// before `addListener` returned the registration's ID), or when waiting for it ran out.
    private final class FirstRun: Sendable {
        private let state = Mutex<(registration: Int?, ready: Bool, started: Bool)>((nil, false, false))
        private let run: @Sendable (Int) -> Void

        init(_ run: @escaping @Sendable (Int) -> Void) { self.run = run }

        func registered(_ registration: Int) {
            let ready = state.withLock { state -> Bool in
                state.registration = registration
                return state.ready
            }
            if ready { start() }
        }

        func valueCame() {
            let registered = state.withLock { state -> Bool in
                state.ready = true
                return state.registration != nil
            }
            if registered { start() }
        }

        func start() {
            let registration = state.withLock { state -> Int? in
                guard let registration = state.registration, !state.started else { return nil }
                state.started = true
                return registration
            }
            if let registration { run(registration) }
        }
    }

    static let maxTransactionAttempts = 25

    private func attempt(_ transaction: Transaction) {
        var transaction = transaction
        while true {
            let input = state.withLock { $0.tree.visible(at: transaction.path).node }
            guard let output = transaction.update(input) else {
                removeListener(transaction.registration)
                transaction.completion(.success((false, input)))
                return
            }
            transaction.attempts += 1
            let sent = state.withLock { state -> Bool in
                // Someone changed the value while `update` ran: run it again on the new one.
                guard state.tree.visible(at: transaction.path).node == input else { return false }
                return true
            }
            guard sent else { continue }
            let result = write(
                transaction.path, .set(output), hash: input.hash, visible: transaction.applyLocally, persist: false,
                completion: nil)
            switch result {
            case .failure(let error):
                removeListener(transaction.registration)
                transaction.completion(.failure(error))
            case .success(let id):
                state.withLock { $0.transactions[id] = transaction }
            }
            return
        }
    }

    private func finishTransaction(_ transaction: Transaction, writeID: Int64, status: String, message: String) {
        if status == "ok" {
            let value = state.withLock { $0.tree.visible(at: transaction.path).node }
            removeListener(transaction.registration)
            transaction.completion(.success((true, value)))
        } else if status == "datastale", transaction.attempts < Self.maxTransactionAttempts {
            attempt(transaction)
        } else {
            removeListener(transaction.registration)
            let error = status == "datastale"
                ? HearthClientError(.transactionConflict, "The transaction gave up after \(transaction.attempts) conflicting writes.")
                : Self.error(status: status, message: message)
            transaction.completion(.failure(error))
        }
    }

    // MARK: - Connection

    func goOffline() {
        state.withLock { state in
            state.online = false
            state.link.outbound?.finish()
        }
        wakeup.signal()
    }

    func goOnline() {
        state.withLock { $0.online = true }
        wakeup.signal()
    }

    /// The credential changed (sign-in, sign-out, a new token): nothing more is sent until the
    /// connection has authenticated again, so later writes are judged as the new user.
    func credentialChanged() {
        let wasReady = state.withLock { state -> Bool in
            guard case .open(let outbound, true) = state.link else { return false }
            state.link = .open(outbound, ready: false)
            publishStatus(&state)
            return true
        }
        guard wasReady else { return }
        Task { await authenticate(restoring: true) }
    }

    /// Ends the connection for good (the database is going away).
    func stop() {
        state.withLock { state in
            state.online = false
            state.stopped = true
            state.link.outbound?.finish()
        }
        wakeup.signal()
        flushCache()
    }

    private func runConnection() async {
        var backoff = Duration.seconds(1)
        while !Task.isCancelled {
            let (outbound, continuation) = AsyncStream<String>.makeStream()
            let url = state.withLock { state -> String? in
                guard state.online else { return nil }
                state.link = .connecting(continuation)
                state.handshakes = 0
                return socketURL(state.sessionID)
            }
            guard let url else {
                if state.withLock({ $0.stopped }) { return }
                // Offline by request: wait for goOnline.
                await wakeup.wait()
                continue
            }
            await RealtimeSocket.run(url: url, outbound: outbound) { [weak self] event in
                if case .message(let text) = event { self?.receive(text) }
            }
            continuation.finish()
            if disconnected() { backoff = .seconds(1) }
            // Wait before trying again (goOnline and goOffline cut it short).
            await wakeup.wait(timeout: backoff + .milliseconds(Int.random(in: 0...250)))
            backoff = min(backoff * 2, .seconds(30))
        }
    }

    /// The socket closed: listens and unanswered writes are sent again on the next connection.
    /// Returns whether the connection had opened.
    private func disconnected() -> Bool {
        var failed: [WriteCompletion] = []
        let opened = state.withLock { state -> Bool in
            state.link = .offline
            defer { publishStatus(&state) }
            state.listens = [:]
            state.sentWrites = []
            state.tags = [:]
            state.authenticatedToken = nil
            for (_, request) in state.requests {
                switch request {
                case .other(let completion?): failed.append(completion)
                case .get(let completion): failed.append { completion($0.map { .null }) }
                default: break
                }
            }
            state.requests = [:]
            emit(state.tree.setInfo("connected", .bool(false)), state)
            return state.handshakes > 0
        }
        for completion in failed { completion(.failure(HearthClientError(.unexpectedResponse, "The connection closed."))) }
        return opened
    }

    /// Handles one message from the server.
    private func receive(_ text: String) {
        guard let message = try? RealtimeMessage.parse(text) else { return }
        var afterwards: [@Sendable () -> Void] = []
        var handshake = false
        state.withLock { state in
            switch message {
            case .handshake(let timestamp, let sessionID):
                handshake = true
                state.handshakes += 1
                guard let outbound = state.link.outbound else { return }
                state.link = .open(outbound, ready: false)
                state.sessionID = sessionID ?? state.sessionID
                state.serverTimeOffset = timestamp - clock()
                emit(state.tree.setInfo("serverTimeOffset", .int(state.serverTimeOffset)), state)
                emit(state.tree.setInfo("connected", .bool(true)), state)
            case .response(let id, let status, let data):
                guard let request = state.requests.removeValue(forKey: id) else { return }
                switch request {
                case .listen(let key):
                    guard state.listens[key] != nil else { return }
                    if status == "ok" {
                        emit(state.tree.completeListen(key), state)
                        if key.isDefault || state.tree.views[key] != nil { queueCache(.complete(key), state: &state) }
                    } else {
                        revoke(key, error: Self.error(status: status, message: Self.text(data)), state: &state)
                    }
                case .write(let writeID):
                    emit(state.tree.removeWrite(writeID), state)
                    try? cache?.removeWrite(writeID)
                    publishStatus(&state)
                    let completion = state.writeCompletions.removeValue(forKey: writeID)
                    if let transaction = state.transactions.removeValue(forKey: writeID) {
                        let message = Self.text(data)
                        afterwards.append { self.finishTransaction(transaction, writeID: writeID, status: status, message: message) }
                    } else if let completion {
                        let result: Result<Void, HearthClientError> =
                            status == "ok" ? .success(()) : .failure(Self.error(status: status, message: Self.text(data)))
                        afterwards.append { completion(result) }
                    }
                case .auth:
                    break
                case .get(let completion):
                    let result: Result<Node, HearthClientError> =
                        status == "ok" ? .success(data) : .failure(Self.error(status: status, message: Self.text(data)))
                    afterwards.append { completion(result) }
                case .other(let completion):
                    if let completion {
                        let result: Result<Void, HearthClientError> =
                            status == "ok" ? .success(()) : .failure(Self.error(status: status, message: Self.text(data)))
                        afterwards.append { completion(result) }
                    }
                }
            case .data(let path, let value, let tag):
                guard let key = taggedView(tag, state) else { return }
                emit(state.tree.applyServerOverwrite(value, at: path, tag: key), state)
                if let key {
                    queueCache(.window(key, state.tree.views[key]?.window.node ?? .null), state: &state)
                } else {
                    queueCache(.value(path, value), state: &state)
                }
            case .merge(let path, let children, let tag):
                guard let key = taggedView(tag, state) else { return }
                emit(state.tree.applyServerMerge(children, at: path, tag: key), state)
                if let key {
                    queueCache(.window(key, state.tree.views[key]?.window.node ?? .null), state: &state)
                } else {
                    for child in children { queueCache(.value(path.appending(child.path), child.value), state: &state) }
                }
            case .listenRevoked(let path, let query):
                let key = state.listens.keys.first { $0.path == path && ($0.isDefault ? query == nil : $0.identifier == query) }
                    ?? state.listens.keys.first { $0.path == path }
                if let key {
                    revoke(key, error: HearthClientError(.permissionDenied, "Permission denied"), state: &state)
                }
            case .authRevoked:
                afterwards.append { Task { await self.authenticate(restoring: false, forceRefresh: true) } }
            case .reset:
                state.link.outbound?.finish()
            case .ignored:
                break
            }
        }
        // Answers go after the events the same message caused (a refused write's undoing
        // first), as Firebase's SDKs call completions after raising events.
        if !afterwards.isEmpty { callbacks.async { [afterwards] in for action in afterwards { action() } } }
        if handshake { Task { await authenticate(restoring: true) } }
    }

    /// The view a tagged push is for: `.some(nil)` for an untagged push, nil for a tag no
    /// longer listened (the push is dropped).
    private func taggedView(_ tag: Int64?, _ state: State) -> ViewKey?? {
        guard let tag else { return .some(nil) }
        return state.tags[tag].map { .some($0) }
    }

    /// Sends the credential (or signs the connection out), then, on a new connection, every
    /// listen, every unanswered write in order and the queued onDisconnect requests.
    private func authenticate(restoring: Bool, forceRefresh: Bool = false) async {
        let credential = await token(forceRefresh)
        state.withLock { state in
            guard state.link.outbound != nil else { return }
            if credential != state.authenticatedToken {
                let id = state.nextRequest
                state.nextRequest += 1
                state.requests[id] = .auth
                if let credential {
                    let body = RealtimeMessage.object([("cred", RealtimeMessage.json(.string(credential)))])
                    state.link.outbound?.yield(RealtimeMessage.request(id: id, action: "auth", body: body))
                } else {
                    state.link.outbound?.yield(RealtimeMessage.request(id: id, action: "unauth", body: "{}"))
                }
                state.authenticatedToken = credential
            }
            guard restoring, case .open(let outbound, false) = state.link else { return }
            state.link = .open(outbound, ready: true)
            defer { publishStatus(&state) }
            syncListens(&state)
            for write in state.tree.writes where !state.sentWrites.contains(write.id) { send(write, state: &state) }
            let queued = state.queuedRequests
            state.queuedRequests = []
            for request in queued { sendRequest(request.action, body: request.body, completion: request.completion, state: &state) }
            for get in state.queuedGets { state.link.outbound?.yield(get.message) }
            state.queuedGets = []
        }
    }

    /// Asks the server for the listens the views need and drops the ones they no longer do.
    private func syncListens(_ state: inout State) {
        let needed = state.tree.neededListens
        guard state.isReady else { return }
        for key in state.listens.keys where needed[key] == nil {
            let tag = state.listens.removeValue(forKey: key) ?? nil
            if let tag { state.tags[tag] = nil }
            let id = state.nextRequest
            state.nextRequest += 1
            var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(key.path))))]
            if !key.isDefault { fields.append(("q", key.identifier)) }
            if let tag { fields.append(("t", String(tag))) }
            state.link.outbound?.yield(RealtimeMessage.request(id: id, action: "n", body: RealtimeMessage.object(fields)))
        }
        for (key, query) in needed.sorted(by: { Path.compare($0.key.path, $1.key.path) < 0 }) where state.listens[key] == nil {
            var tag: Int64?
            if query != nil {
                tag = state.nextTag
                state.nextTag += 1
                state.tags[tag!] = key
            }
            state.listens[key] = tag
            let id = state.nextRequest
            state.nextRequest += 1
            state.requests[id] = .listen(key)
            var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(key.path))))]
            fields.append(("q", key.isDefault ? "{}" : key.identifier))
            if let tag { fields.append(("t", String(tag))) }
            // The hash of complete data held here lets the server skip sending it again.
            var hash = ""
            if key.isDefault, state.tree.isCovered(key.path) {
                hash = state.tree.serverKnown(at: key.path).node.hash
            } else if let view = state.tree.views[key], view.window.complete {
                hash = view.window.node.hash
            }
            fields.append(("h", RealtimeMessage.json(.string(hash))))
            state.link.outbound?.yield(RealtimeMessage.request(id: id, action: "q", body: RealtimeMessage.object(fields)))
        }
    }

    /// A listen the server refused or ended: its views go, their listeners are told.
    private func revoke(_ key: ViewKey, error: HearthClientError, state: inout State) {
        let tag = state.listens.removeValue(forKey: key) ?? nil
        if let tag { state.tags[tag] = nil }
        let affected = state.tree.views.keys.filter { key.isDefault ? $0.path == key.path : $0 == key }
        var cancels: [CancelHandler] = []
        for view in affected {
            for registration in state.tree.removeView(view) {
                if let cancel = state.listeners.removeValue(forKey: registration.id)?.cancel { cancels.append(cancel) }
            }
        }
        syncListens(&state)
        let cancelled = cancels
        callbacks.async { for cancel in cancelled { cancel(error) } }
    }

    // MARK: - Cache

    private func queueCache(_ update: LocalCache.CacheUpdate, state: inout State) {
        guard cache != nil else { return }
        state.cacheUpdates.append(update)
        guard !state.cacheFlushScheduled else { return }
        state.cacheFlushScheduled = true
        Task.detached { [weak self] in
            try? await Task.sleep(for: .milliseconds(50))
            self?.flushCache()
        }
    }

    /// Saves the server data received since the last flush, in one transaction.
    func flushCache() {
        let batch = state.withLock { state -> [LocalCache.CacheUpdate] in
            state.cacheFlushScheduled = false
            defer { state.cacheUpdates = [] }
            return state.cacheUpdates
        }
        try? cache?.save(batch)
    }

    // MARK: - Delivery

    /// Calls `observer` with the connection and pending writes now and at every change.
    func addStatusObserver(_ observer: @escaping @Sendable (SyncStatus) -> Void) -> Int {
        state.withLock { state in
            let id = state.nextRegistration
            state.nextRegistration += 1
            state.statusObservers[id] = observer
            let status = state.status
            state.lastStatus = status
            callbacks.async { observer(status) }
            return id
        }
    }

    func removeStatusObserver(_ id: Int) {
        state.withLock { _ = $0.statusObservers.removeValue(forKey: id) }
    }

    /// Tells the status observers when the connection or the pending writes changed, in
    /// order with the events.
    private func publishStatus(_ state: inout State) {
        // Computing the status lists every pending write: only when someone follows it.
        guard !state.statusObservers.isEmpty else { return }
        let status = state.status
        guard status != state.lastStatus else { return }
        state.lastStatus = status
        let observers = Array(state.statusObservers.values)
        guard !observers.isEmpty else { return }
        callbacks.async { for observer in observers { observer(status) } }
    }

    /// Hands events to the callback queue. Called under the lock, so the queue gets them in
    /// the order they were made.
    private func emit(_ events: [ViewEvent], _ state: State) {
        let delivery = events.compactMap { event in state.listeners[event.registration]?.handler.map { ($0, event) } }
        guard !delivery.isEmpty else { return }
        callbacks.async { for (handler, event) in delivery { handler(event) } }
    }

    /// Runs after every event queued so far has been delivered.
    func afterDelivery(_ action: @escaping @Sendable () -> Void) {
        callbacks.async(execute: action)
    }

    // MARK: - Reading

    /// What this device shows at `path` and whether it is complete.
    func visible(at path: Path) -> KnownNode {
        state.withLock { $0.tree.visible(at: path) }
    }

    /// True while the connection is open and ready.
    var isConnected: Bool { state.withLock { $0.isReady } }

    var syncStatus: SyncStatus { state.withLock { $0.status } }

    /// The IDs of writes not yet acknowledged touching `path` (at, above or below).
    func pendingWrites(touching path: Path) -> Int {
        state.withLock { state in state.tree.writes.filter { $0.touches(path) }.count }
    }

    // MARK: - Errors

    static func error(status: String, message: String) -> HearthClientError {
        switch status {
        case "permission_denied": return HearthClientError(.permissionDenied, message.isEmpty ? "Permission denied" : message)
        case "datastale": return HearthClientError(.transactionConflict, message.isEmpty ? "The data changed." : message)
        default: return HearthClientError(.badRequest, message.isEmpty ? status : message)
        }
    }

    private static func text(_ node: Node) -> String {
        if case .string(let text) = node { return text }
        return ""
    }
}
