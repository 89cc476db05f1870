import DequeModule
import Foundation
import HearthAuth
import HearthCore
import HearthProtocol
import HearthStore
import Logging
import NIOCore
import Synchronization
import Crypto

/// One client's realtime session (docs/protocol.md §6–§9): who it is signed in as, its listens, its
/// pipelined writes and its onDisconnect operations, on one database. Transports
/// (``RealtimeWebSocket``, long-polling) feed it whole messages and write out what it queues on
/// ``outbound``; it calls ``DatabaseOperations`` for every request and answers through
/// ``RealtimeStatus``, the protocol's one path for errors.
///
/// Threading: one task at a time calls ``receive(_:)`` (the connection's reader), so requests
/// are handled in their order; it suspends for token checks and, before a read, for the
/// session's own writes to be durable (a read after a write sees it). Writes are queued with
/// the database in order and answered from its commit thread. ``outbound`` is the wire order:
/// a listen's data and its `ok` are queued under the listener registry's lock, before any
/// event of that listen. `state` guards the mutable fields.
public final class RealtimeSession: Sendable {

    /// A listen, as the client names it in `n`: its path and its query's tag.
    struct ListenKey: Hashable, Sendable {
        var path: Path
        var tag: Int64?
    }

    struct QueuedDisconnect: Sendable {
        var position: Int64
        var path: Path
        var record: DisconnectQueueStore.Record
    }

    private struct State {
        var auth = RequestAuth.anonymous
        /// True when `auth` names no account the gate answers for: an emulator's unsigned test
        /// token, or an admin's auth override (`authvar`, firebase-admin's
        /// `databaseAuthVariableOverride`), whose uid may be any name.
        var authHasNoAccount = false
        var listens: [ListenKey: Listener] = [:]
        var outstandingWrites = 0
        /// Write answers go out in the order of the writes, whatever order they finish in.
        var nextWriteTicket = 0
        var nextWriteToAnswer = 0
        var finishedWrites: [Int: [UInt8]] = [:]
        /// The reader, waiting until at most `threshold` writes are outstanding.
        var writeWaiter: (threshold: Int, continuation: CheckedContinuation<Void, Never>)?
        var disconnects: [QueuedDisconnect] = []
        var disconnectBytes = 0
        var nextPosition: Int64 = 0
        var ended = false
        /// Messages a socket delivered, handled in order by one task while there are any.
        var inbox = Deque<RealtimeClientMessage>()
        var processing = false
        var readingPaused = false
        var resumeReading: (@Sendable () -> Void)?
    }

    /// Messages a transport may leave waiting before it should stop reading.
    static let inboxLimit = 256

    /// The session's ID, which a client presents to move a long-polling session to a WebSocket: never log it (use the digest).
    public let id: String
    /// How logs name the session: a digest of ``id``, never the ID itself, which is what a
    /// WebSocket presents to take over a long-polling session (`/.ws?s=<id>`).
    let logID: String
    let database: Database
    /// Everything sent to the client, in wire order, for the transport to drain.
    public let outbound: EventBuffer
    /// The transport's check that its client is still there (a socket's ping), run on each
    /// keep-alive tick with the time in milliseconds and a delay (the checks are spread out).
    public let livenessCheck = Mutex<LivenessCheck?>(nil)
    /// What the transport does when the client ends transmission on it (`n`, the last message a
    /// long-polling client sends before its WebSocket takes over), in the order of its requests.
    public let endOfTransmission = Mutex<TransmissionEnd?>(nil)

    // A hook is kept in a struct, never as a bare closure in a `Mutex`: a `Mutex` whose value is
    // itself a function type stores it at the generic abstraction, and `withLock { $0 }` writes
    // the closure back through a new reabstraction thunk on every read. The stored hook then
    // grew by one thunk (about 32 bytes) per call, and each call ran through all of them: every
    // realtime connection gained a thunk per keep-alive tick for its whole life (a soak with
    // 18,800 idle connections grew 2 MB every 30 s; see BENCHMARKS.md, 2026-11-25).

    /// A transport's liveness check (see ``livenessCheck``): given the time in milliseconds
    /// and how long to wait before checking.
    public struct LivenessCheck: Sendable {
        let run: @Sendable (_ now: Int64, _ after: Duration) -> Void

        /// `run` is called with the time in milliseconds and how long to wait before checking.
        public init(run: @escaping @Sendable (_ now: Int64, _ after: Duration) -> Void) {
            self.run = run
        }
    }

    /// A transport's end-of-transmission hook (see ``endOfTransmission``).
    public struct TransmissionEnd: Sendable {
        let run: @Sendable () -> Void

        /// `run` is called once the client has ended transmission.
        public init(run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }
    private let service: RealtimeService
    private let state = Mutex(State())

    private var operations: DatabaseOperations { service.operations }
    private var limits: RealtimeLimits { service.limits }

    init(id: String, database: Database, service: RealtimeService) {
        self.id = id
        self.logID = SHA256.hash(data: Data(id.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
        self.database = database
        self.service = service
        let metrics = service.operations.metrics
        self.outbound = EventBuffer(
            maxEvents: service.limits.maxQueuedEvents, maxBytes: service.limits.maxQueuedBytes,
            onOverflow: { metrics.streamDropped(transport: "realtime") })
    }

    // MARK: - Sending

    func send(_ message: [UInt8]) {
        outbound.push(ByteBuffer(bytes: message), sequence: 0, bounded: false)
    }

    private func respond(_ id: Int64, data: Node = .object([])) {
        send(RealtimeServerMessage.response(id: id, status: RealtimeStatus.ok, data: data))
    }

    private func respond(_ id: Int64, failure error: any Error) {
        let status = RealtimeStatus(error)
        send(RealtimeServerMessage.response(id: id, status: status.status, data: .string(status.message)))
    }

    func sendHandshake(host: String) {
        send(RealtimeServerMessage.handshake(timestamp: operations.clock(), host: host, sessionID: id))
    }

    // MARK: - Receiving

    /// Handles one whole message from the client.
    func receive(_ message: RealtimeClientMessage) async {
        switch message {
        case .ping: send(RealtimeServerMessage.pong)
        case .control("n"): endOfTransmission.withLock { $0 }?.run()
        case .control: break
        case .rejected(let id, let error): respond(id, failure: error)
        case .request(let id, let request): await handle(request, id: id)
        }
    }

    /// Queues a whole message for ``receive(_:)``: one task at a time handles the queue, in
    /// order, and none runs while it is empty. Returns false when the transport should stop
    /// reading until `resumeReading` (given once) is called.
    public func deliver(_ message: RealtimeClientMessage, resumeReading: @escaping @Sendable () -> Void) -> Bool {
        let (start, keepReading) = state.withLock { state -> (Bool, Bool) in
            state.inbox.append(message)
            state.resumeReading = resumeReading
            let start = !state.processing
            state.processing = true
            if state.inbox.count >= Self.inboxLimit { state.readingPaused = true }
            return (start, !state.readingPaused)
        }
        if start { Task { await processInbox() } }
        return keepReading
    }

    private func processInbox() async {
        while true {
            let (next, resume) = state.withLock { state -> (RealtimeClientMessage?, (@Sendable () -> Void)?) in
                guard let next = state.inbox.popFirst() else {
                    state.processing = false
                    // An idle session keeps no storage for messages.
                    state.inbox = Deque()
                    guard state.readingPaused else { return (nil, nil) }
                    state.readingPaused = false
                    return (nil, state.resumeReading)
                }
                return (next, nil)
            }
            guard let next else {
                resume?()
                return
            }
            await receive(next)
        }
    }

    private func handle(_ request: RealtimeRequest, id: Int64) async {
        operations.metrics.realtimeRequest(action: request.metricName)
        if let log = operations.requestLog, log.isEnabled {
            // A message is answered later on the socket: it is logged as received, without a status.
            log.record(
                path: request.loggedPath.map { "\($0)" } ?? "/", time: Date(), method: request.metricName,
                transport: "realtime", requestID: "\(logID)#\(id)", uid: auth.logName)
        }
        switch request {
        case .stats, .appCheck:
            respond(id)
        case .unknown(let action):
            send(RealtimeServerMessage.response(id: id, status: "failed", data: .string("Unknown action \(action).")))
        case .auth(let credential, let override):
            await authenticate(credential, override: override, id: id)
        case .unauth:
            setAuth(.anonymous)
            respond(id)
        case .listen(let path, let view, let hash):
            await writesSettled(atMost: 0)
            listen(at: path, view: view, hash: hash, id: id)
        case .unlisten(let path, let view):
            let removed = state.withLock { $0.listens.removeValue(forKey: ListenKey(path: path, tag: view.tag)) }
            if let removed { operations.hub.unsubscribe(removed) }
            respond(id)
        case .get(let path, let view):
            await writesSettled(atMost: 0)
            get(at: path, query: view.query, id: id)
        case .put(let path, let data, let hash):
            await writesSettled(atMost: limits.maxOutstandingWrites - 1)
            write(.set(path, data), condition: hash.map { .hash($0) }, id: id)
        case .merge(let path, let entries):
            await writesSettled(atMost: limits.maxOutstandingWrites - 1)
            write(.update(path, entries), condition: nil, id: id)
        case .onDisconnectPut(let path, let data):
            await queueOnDisconnect(.set(path, data), id: id)
        case .onDisconnectMerge(let path, let entries):
            await queueOnDisconnect(.update(path, entries), id: id)
        case .onDisconnectCancel(let path):
            await cancelOnDisconnect(at: path, id: id)
        }
    }

    // MARK: - Auth

    private func authenticate(_ credential: String, override: RealtimeRequest.AuthOverride?, id: Int64) async {
        do {
            var auth = try await RequestAuth.resolve(
                credential: credential, admin: service.admin, issuer: service.issuer, gate: service.gate, now: operations.clock())
            var overridden = false
            if case .admin = auth, let override {
                overridden = true
                switch override {
                case .signedOut: auth = .anonymous
                case .auth(let variable): auth = .rules(auth: variable, expires: nil)
                }
            }
            setAuth(auth, hasNoAccount: overridden || (service.admin.emulator && RequestAuth.unsignedClaims(credential) != nil))
            let expires: Node = auth.expires.map { .int($0 / 1000) } ?? .null
            respond(id, data: .object([(ChildKey("auth"), auth.ruleAuth ?? .null), (ChildKey("expires"), expires)]))
        } catch {
            setAuth(.anonymous)
            respond(id, failure: error)
        }
    }

    private func setAuth(_ auth: RequestAuth, hasNoAccount: Bool = false) {
        let listeners = state.withLock { state -> [Listener] in
            state.auth = auth
            state.authHasNoAccount = hasNoAccount
            return Array(state.listens.values)
        }
        operations.hub.reauthorize(listeners, as: auth.ruleAuth, on: database)
    }

    /// When the credential has expired: `ac` with `expired_token`, and signed out from now on.
    func expireCredential(now: Int64) {
        let expired = state.withLock { state -> Bool in
            guard let expires = state.auth.expires, expires <= now else { return false }
            return true
        }
        guard expired else { return }
        setAuth(.anonymous)
        send(RealtimeServerMessage.authRevoked(status: "expired_token", reason: "Auth token is expired."))
    }

    private var auth: RequestAuth { state.withLock(\.auth) }

    /// The uid the connection is signed in as with an ID token (not an admin's or a test token's).
    var signedInUID: String? { signedIn?.uid }

    /// The uid the connection is signed in as, when its token was issued (seconds), and the
    /// sign-in session it belongs to (its `jti`).
    private var signedIn: (uid: String, issuedAt: Int64?, session: String?)? {
        state.withLock { state in
            guard !state.authHasNoAccount, case .rules(let auth, _) = state.auth, case .string(let uid) = auth.child(ChildKey("uid"))
            else { return nil }
            let token = auth.child(ChildKey("token"))
            return (uid, token.child(ChildKey("iat")).integerValue, RequestAuth.sessionID(token.child(ChildKey("jti"))))
        }
    }

    /// Asks the account gate again about the account the connection is signed in as; when it
    /// refuses it now (disabled, deleted, signed out everywhere): `ac` with `invalid_token`,
    /// and signed out from now on. The SDKs then ask for a new token, and learn why.
    func recheckCredential() async {
        guard let gate = service.gate, let (uid, issuedAt, session) = signedIn else { return }
        guard let refusal = await gate.refusal(uid: uid, issuedAt: issuedAt, session: session), signedInUID == uid else { return }
        setAuth(.anonymous)
        send(RealtimeServerMessage.authRevoked(status: RealtimeStatus.invalidToken, reason: RequestAuth.refused(refusal).message))
    }

    // MARK: - Reading

    private func listen(at path: Path, view: RealtimeRequest.QueryView, hash: String?, id: Int64) {
        let key = ListenKey(path: path, tag: view.tag)
        // An untagged listen loads the whole location (the SDK filters a bare orderBy itself).
        let query = view.tag == nil ? nil : view.query
        let (replaced, full) = state.withLock { state -> (Listener?, Bool) in
            let replaced = state.listens.removeValue(forKey: key)
            return (replaced, state.listens.count >= limits.maxListens)
        }
        if let replaced { operations.hub.unsubscribe(replaced) }
        guard !full else {
            return send(RealtimeServerMessage.response(
                id: id, status: "failed", data: .string("Too many listens on one connection (\(limits.maxListens)).")))
        }
        let delivery = DatabaseOperations.ListenDelivery(
            format: .realtime(tag: view.tag, queryObject: view.queryObject), buffer: outbound)
        var tooBig = false
        let maxResponseBytes = limits.maxResponseBytes
        do {
            let (listener, _) = try operations.listen(
                database, at: path, query: query, auth: auth, missingIndex: .warn, delivery: delivery
            ) { initial, unindexed in
                guard initial.estimatedSize <= maxResponseBytes else {
                    tooBig = true
                    return send(RealtimeServerMessage.response(id: id, status: "too_big", data: .string(Self.tooBigText)))
                }
                if hash != DatabaseOperations.conditionHash(of: initial) {
                    send(RealtimeServerMessage.dataPush(
                        path: path, encodedData: JSONWriter.bytes(initial, format: .init(export: true)), tag: view.tag))
                }
                // The SDKs warn that the query is filtered on the client when there is no index.
                let warnings = unindexed ? #"{"w":["no_index"]}"# : "{}"
                send(RealtimeServerMessage.response(id: id, status: RealtimeStatus.ok, encodedData: Array(warnings.utf8)))
            }
            if tooBig {
                operations.hub.unsubscribe(listener)
            } else {
                state.withLock { $0.listens[key] = listener }
            }
        } catch {
            respond(id, failure: error)
        }
    }

    static let tooBigText = "The specified payload is too large, please request a location with less data."

    private func get(at path: Path, query: Query?, id: Int64) {
        do {
            let value = try operations.read(database, at: path, query: query, auth: auth)
            guard value.estimatedSize <= limits.maxResponseBytes else {
                return send(RealtimeServerMessage.response(id: id, status: "too_big", data: .string(Self.tooBigText)))
            }
            respond(id, data: value)
        } catch {
            respond(id, failure: error)
        }
    }

    // MARK: - Writing

    private func write(_ change: DatabaseOperations.Change, condition: DatabaseOperations.Condition?, id: Int64) {
        let ticket = state.withLock { state -> Int in
            state.outstandingWrites += 1
            defer { state.nextWriteTicket += 1 }
            return state.nextWriteTicket
        }
        operations.submit(change, to: database, auth: auth, condition: condition) { [self] result in
            switch result {
            case .success:
                // Commit observers ran before this, so the write's fan-out is already queued: the
                // `ok` goes after the events it caused.
                let answer = RealtimeServerMessage.response(id: id, status: RealtimeStatus.ok, data: .null)
                operations.hub.afterDelivery { self.finishWrite(ticket, answer: answer) }
            case .failure(let error):
                // After the fan-out of the writes that came first (a `datastale` client has then
                // been sent the value its transaction must run on again).
                let status = RealtimeStatus(error)
                let answer = RealtimeServerMessage.response(id: id, status: status.status, data: .string(status.message))
                operations.hub.afterDelivery { self.finishWrite(ticket, answer: answer) }
            }
        }
    }

    /// Queues the answers of the writes finished so far, in write order, and lets a waiting
    /// reader go on.
    private func finishWrite(_ ticket: Int, answer: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finishedWrites[ticket] = answer
            // Sent under the lock, so two finishing writes cannot swap their answers.
            while let next = state.finishedWrites.removeValue(forKey: state.nextWriteToAnswer) {
                send(next)
                state.nextWriteToAnswer += 1
                state.outstandingWrites -= 1
            }
            if state.finishedWrites.isEmpty { state.finishedWrites = [:] }
            guard let waiter = state.writeWaiter, state.outstandingWrites <= waiter.threshold else { return nil }
            state.writeWaiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    /// Waits until at most `threshold` of this session's writes are not yet durable.
    private func writesSettled(atMost threshold: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.outstandingWrites > threshold else { return true }
                state.writeWaiter = (threshold, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    // MARK: - onDisconnect

    private func queueOnDisconnect(_ change: DatabaseOperations.Change, id: Int64) async {
        do {
            // Judged now, and again as the same identity when it runs.
            let (auth, hasNoAccount) = state.withLock { ($0.auth, $0.authHasNoAccount) }
            try operations.check(change, on: database, auth: auth)
            let (path, kind, data): (Path, String, [UInt8])
            switch change {
            case .set(let target, let value):
                (path, kind, data) = (target, "set", JSONWriter.bytes(value.node, format: .init(export: true)))
            case .update(let base, let entries):
                let object = entries.map { ResolvedWrite.UpdateEntry(path: $0.path, value: $0.value.node) }
                (path, kind, data) = (base, "update", JSONWriter.updateObject(object, format: .init(export: true)))
            }
            let queued = state.withLock { state -> QueuedDisconnect? in
                guard state.disconnects.count < limits.maxOnDisconnectOperations,
                    state.disconnectBytes + data.count <= limits.maxOnDisconnectBytes
                else { return nil }
                let position = state.nextPosition
                state.nextPosition += 1
                state.disconnectBytes += data.count
                let record = DisconnectQueueStore.Record(
                    session: self.id, position: position, database: database.name, kind: kind, path: path.description, data: data,
                    auth: RealtimeService.storedIdentity(of: auth, hasNoAccount: hasNoAccount))
                let queued = QueuedDisconnect(position: position, path: path, record: record)
                state.disconnects.append(queued)
                return queued
            }
            guard let queued else {
                throw HearthError(.writeTooBig, "Too many onDisconnect operations on one connection.")
            }
            try await service.disconnects.add(queued.record)
            respond(id)
        } catch {
            respond(id, failure: error)
        }
    }

    private func cancelOnDisconnect(at path: Path, id: Int64) async {
        let cancelled = state.withLock { state -> [QueuedDisconnect] in
            let cancelled = state.disconnects.filter { path.contains($0.path) }
            state.disconnects.removeAll { path.contains($0.path) }
            state.disconnectBytes -= cancelled.reduce(0) { $0 + $1.record.data.count }
            return cancelled
        }
        do {
            try await service.disconnects.remove(session: self.id, positions: cancelled.map(\.position))
            respond(id)
        } catch {
            respond(id, failure: error)
        }
    }

    // MARK: - Ending

    /// The connection is gone: listens stop, then the onDisconnect operations run in order
    /// (after the session's own writes, which were queued first) and are forgotten.
    func end() async {
        let (listeners, disconnects) = state.withLock { state -> ([Listener], [QueuedDisconnect]) in
            guard !state.ended else { return ([], []) }
            state.ended = true
            defer {
                state.listens = [:]
                state.disconnects = []
            }
            return (Array(state.listens.values), state.disconnects)
        }
        outbound.close()
        for listener in listeners { operations.hub.unsubscribe(listener) }
        guard !disconnects.isEmpty else { return }
        let records: [DisconnectQueueStore.Record]
        do {
            // In a cluster, another node may have taken them over (this node lost its lease).
            records = try await service.disconnects.claim(session: id, known: disconnects.map(\.record))
        } catch {
            service.logger.error("could not claim the onDisconnect operations of an ended session", metadata: ["error": "\(error)"])
            return
        }
        await service.apply(records)
        do {
            try await service.disconnects.remove(session: id)
        } catch {
            service.logger.error("could not forget applied onDisconnect operations", metadata: ["error": "\(error)"])
        }
    }
}
