import Dispatch
import HearthCore
import HearthProtocol
import HearthRules
import HearthStore
import NIOCore
import Synchronization

/// Every open listen (Server-Sent Events streams and realtime listens), by database and path,
/// and the fan-out of committed writes to them.
///
/// Each database's commits reach the hub through its provider's event stream (`committed(_:version:database:)`,
/// subscribed by ``DatabaseOperations``) and are fanned out in commit order on one serial
/// queue, off the commit path. The hub works out the transport-neutral event each location gets (``ListenerEvent``,
/// or a query's new result) and encodes it once per format (``ListenerEncoding``); listeners at
/// the same path share those bytes. A new listener's initial value and the events it receives
/// line up by sequence number, so nothing is missed or repeated.
///
/// Locking: `registry` guards the groups; each group's own lock guards its listeners and is
/// taken only inside `registry`. Fan-out, subscribe (with its initial delivery) and
/// revocation all run under `registry`, which is what orders a listen's initial data before
/// its events.
public final class ListenerHub: Sendable {
    /// The listeners at one path.
    final class Group: Sendable {
        let listeners = Mutex<[ObjectIdentifier: Listener]>([:])
    }

    private struct Registry {
        var groups: [String: SortedTree<Path, Group>] = [:]
        var count = 0
        /// True once the server is shutting down: new streams end at once.
        var shutDown = false
        /// Per database, the listeners whose read grant depends on data (rechecked on writes).
        var dataDependent: [String: [ObjectIdentifier: Listener]] = [:]
    }

    private let registry = Mutex(Registry())
    /// True once a listener subscribed: until then, commits are not worth a trip to the
    /// fan-out queue (a server nobody listens to writes at full speed).
    private let listening = Atomic<Bool>(false)
    private let fanOutQueue = DispatchQueue(label: "hearth.fanout")
    /// The largest event sent; a bigger one cancels the stream instead.
    public let maxEventBytes: Int
    /// The rules in force for a database (by name), to recheck streams as data changes.
    private let rules: @Sendable (String) -> SecurityRules?
    /// Server time in milliseconds, for the rules' `now`.
    private let clock: @Sendable () -> Int64

    /// `maxEventBytes` is the largest event sent before a stream is cancelled instead; `rules` gives a database's rules (by name) to recheck listens as data changes; `clock` is the rules' `now` in milliseconds.
    public init(
        maxEventBytes: Int = SSEEncoding.maxEventBytes,
        rules: @escaping @Sendable (String) -> SecurityRules? = { _ in nil },
        clock: @escaping @Sendable () -> Int64 = { 0 }
    ) {
        self.maxEventBytes = maxEventBytes
        self.rules = rules
        self.clock = clock
    }

    /// Runs `work` once every commit fanned out so far has reached its listeners' queues: a
    /// realtime write's `ok` goes after the events it caused (the SDKs take a write back if
    /// its `ok` comes before the server's data for it).
    func afterDelivery(_ work: @escaping @Sendable () -> Void) {
        fanOutQueue.async(execute: work)
    }

    /// The number of open streams.
    public var count: Int { registry.withLock { $0.count } }

    /// The number of open streams on each database that has any.
    public func countsByDatabase() -> [String: Int] {
        registry.withLock { registry in
            registry.groups.compactMapValues { groups in
                let count = groups.reduce(0) { $0 + $1.value.listeners.withLock(\.count) }
                return count > 0 ? count : nil
            }
        }
    }

    /// Registers a listener and returns it with its initial value, consistent with the events
    /// that will follow.
    /// - Parameters:
    ///   - auth: the `auth` the rules judge the stream by; nil for an admin.
    ///   - rules: the rules in force, checked against the same version as the initial value.
    ///   - format, buffer: how and where its events go (a realtime connection passes its own
    ///     queue).
    ///   - deliverInitial: called with the initial value before any event can be queued, to
    ///     queue what must come first (a realtime listen's data and `ok`).
    /// - Throws: 401 `Permission denied` when the rules do not allow the read.
    func subscribe(
        to database: Database, at path: Path, query: Query?, expires: Int64? = nil,
        auth: Node? = nil, rules: SecurityRules? = nil, format: ListenerFormat = .serverSentEvents,
        buffer: EventBuffer = EventBuffer(),
        deliverInitial: (Node) -> Void = { _ in }
    ) throws(HearthError) -> (Listener, Node) {
        // Before the initial value is read: a commit published after that read finds the flag
        // set (the version's lock orders the two), so its events are not skipped.
        listening.store(true, ordering: .sequentiallyConsistent)
        let now = clock()
        return try registry.withLock { registry throws(HearthError) in
            let version = database.current
            let initial = Self.value(at: path, query: query, in: version.state)
            let listener = Listener(
                database: database.name, path: path, query: query, startSequence: version.sequence, initial: initial,
                expires: expires, auth: auth, format: format, buffer: buffer
            )
            if let rules {
                guard let grant = listener.readGrant(under: rules, in: version.state, now: now) else {
                    throw HearthError(.permissionDenied, "Permission denied")
                }
                if grant.dependsOnData {
                    listener.grantDependsOnData.store(true, ordering: .relaxed)
                    registry.dataDependent[database.name, default: [:]][ObjectIdentifier(listener)] = listener
                }
            }
            deliverInitial(initial)
            if registry.shutDown {
                // Its stream sends the initial value and ends.
                listener.buffer.close()
                return (listener, initial)
            }
            var groups = registry.groups[database.name] ?? SortedTree()
            let group = groups[path] ?? Group()
            group.listeners.withLock { $0[ObjectIdentifier(listener)] = listener }
            groups.insert(path, group)
            registry.groups[database.name] = groups
            registry.count += 1
            return (listener, initial)
        }
    }

    /// Removes a listener (its stream ended, or its client stopped listening); removing one
    /// that is already gone does nothing.
    public func unsubscribe(_ listener: Listener) {
        registry.withLock { Self.remove(listener, from: &$0) }
    }

    private static func remove(_ listener: Listener, from registry: inout Registry) {
        guard var groups = registry.groups[listener.database], let group = groups[listener.path] else { return }
        let (removed, empty) = group.listeners.withLock { listeners -> (Bool, Bool) in
            let removed = listeners.removeValue(forKey: ObjectIdentifier(listener)) != nil
            return (removed, listeners.isEmpty)
        }
        guard removed else { return }
        if empty { groups.remove(listener.path) }
        registry.groups[listener.database] = groups
        registry.dataDependent[listener.database]?[ObjectIdentifier(listener)] = nil
        registry.count -= 1
    }

    /// Ends a listen the server no longer serves, with `reason` for a stream (`cancel`). A
    /// realtime listen is told `c` and leaves the registry; its connection stays.
    private static func revoke(_ listener: Listener, reason: ByteBuffer, registry: inout Registry) {
        switch listener.format {
        case .serverSentEvents:
            listener.buffer.close(with: [reason])
        case .realtime(_, let queryObject):
            guard !listener.revoked.exchange(true, ordering: .relaxed) else { return }
            remove(listener, from: &registry)
            let notice = RealtimeServerMessage.listenRevoked(path: listener.path, queryObject: queryObject)
            listener.buffer.push(ByteBuffer(bytes: notice), sequence: 0, bounded: false)
        }
    }

    /// Ends every stream, and every stream opened from now on, for a graceful shutdown.
    public func shutDown() {
        let listeners = registry.withLock { registry in
            registry.shutDown = true
            return Self.listeners(in: registry)
        }
        for listener in listeners { listener.buffer.close() }
    }

    /// Forgets the database `name`, which was closed with no listener on it.
    func forget(_ name: String) {
        registry.withLock { registry in
            if registry.groups[name]?.isEmpty ?? false { registry.groups[name] = nil }
            registry.dataDependent[name] = nil
        }
    }

    /// Every listener (for keep-alives).
    public func allListeners() -> [Listener] {
        registry.withLock { Self.listeners(in: $0) }
    }

    /// Ends the Server-Sent Events streams signed in as `uid` with `auth_revoked` (the account
    /// was disabled, deleted or signed out everywhere). Realtime listens go with their session.
    public func closeStreams(signedInAs uid: String) {
        for listener in allListeners() where listener.format == .serverSentEvents {
            guard let auth = listener.auth, case .string(let signedIn) = auth.child(ChildKey("uid")), signedIn == uid else { continue }
            listener.buffer.close(with: [SSEEncoding.authRevoked])
        }
    }

    private static func listeners(in registry: borrowing Registry) -> [Listener] {
        registry.groups.values.flatMap { groups in
            groups.flatMap { $0.value.listeners.withLock { Array($0.values) } }
        }
    }

    /// The value a listener sees: the value at `path`, or the query's result there.
    public static func value(at path: Path, query: Query?, in state: DatabaseState) -> Node {
        guard let query else { return state.value(at: path) }
        return state.queryValue(query, at: path)
    }

    // MARK: - Access

    /// Rechecks every rules-bound stream of `database` against new rules: streams the rules no
    /// longer let read their location get `cancel` with `Permission denied`.
    func rulesChanged(for database: Database) {
        let name = database.name
        fanOutQueue.async { [self] in
            registry.withLock { registry in
                guard let groups = registry.groups[name] else { return }
                let listeners = groups.flatMap { $0.value.listeners.withLock { Array($0.values) } }
                recheck(listeners, in: database.current.state, database: name, registry: &registry)
            }
        }
    }

    /// Judges `listeners` (of one realtime connection, on `database`) by a new `auth` from now
    /// on (nil: an admin's): those the rules no longer let read are revoked.
    func reauthorize(_ listeners: [Listener], as auth: Node?, on database: Database) {
        let live = listeners.filter { !$0.revoked.load(ordering: .relaxed) }
        registry.withLock { registry in
            for listener in live {
                listener.authState.withLock { $0 = auth }
                if auth == nil { registry.dataDependent[database.name]?[ObjectIdentifier(listener)] = nil }
            }
            recheck(live, in: database.current.state, database: database.name, registry: &registry)
        }
    }

    /// Ends the streams that may no longer read, and tracks whose grant depends on data.
    private func recheck(_ listeners: [Listener], in state: DatabaseState, database: String, registry: inout Registry) {
        guard let rules = rules(database) else { return }
        let now = clock()
        for listener in listeners where listener.auth != nil {
            let id = ObjectIdentifier(listener)
            guard let grant = listener.readGrant(under: rules, in: state, now: now) else {
                registry.dataDependent[database]?[id] = nil
                Self.revoke(listener, reason: SSEEncoding.permissionDenied, registry: &registry)
                continue
            }
            listener.grantDependsOnData.store(grant.dependsOnData, ordering: .relaxed)
            if grant.dependsOnData {
                registry.dataDependent[database, default: [:]][id] = listener
            } else {
                registry.dataDependent[database]?[id] = nil
            }
        }
    }

    // MARK: - Fan-out

    /// Takes a database's commit, as its ``HearthStore/DatabaseEvents`` deliver it (on the
    /// commit thread, in commit order), and queues its fan-out; returns at once.
    func committed(_ committed: [Database.Committed], version: Database.Published, database: String) {
        guard listening.load(ordering: .sequentiallyConsistent) else { return }
        fanOutQueue.async { self.fanOut(committed, version: version, database: database) }
    }

    private func fanOut(_ committed: [Database.Committed], version: Database.Published, database: String) {
        registry.withLock { registry in
            guard let groups = registry.groups[database], !groups.isEmpty else { return }
            // A write may revoke a grant that looks at data: such streams are rechecked first,
            // so a stream that loses access never sees the write that took it away.
            if let dependent = registry.dataDependent[database], !dependent.isEmpty {
                recheck(Array(dependent.values), in: version.state, database: database, registry: &registry)
            }
            var dirtyQueries: [ObjectIdentifier: Listener] = [:]
            for write in committed {
                for (path, group) in Self.groups(touchedBy: write.write, in: groups) {
                    let listeners = group.listeners.withLock { Array($0.values) }
                    var encoding: ListenerEncoding?
                    for listener in listeners where write.sequence > listener.startSequence {
                        if listener.query != nil {
                            dirtyQueries[ObjectIdentifier(listener)] = listener
                            continue
                        }
                        if encoding == nil {
                            guard let event = write.write.event(forListenerAt: path) else { break }
                            if SSEEncoding.isTooLarge(event, limit: maxEventBytes) {
                                for listener in listeners where listener.query == nil {
                                    Self.revoke(listener, reason: SSEEncoding.payloadTooLarge, registry: &registry)
                                }
                                break
                            }
                            encoding = ListenerEncoding(event, at: path)
                        }
                        listener.buffer.push(encoding!.bytes(for: listener.format), sequence: write.sequence)
                    }
                }
            }
            // A query's result is recomputed once per batch and sent only when it changed.
            for listener in dirtyQueries.values {
                let result = Self.value(at: listener.path, query: listener.query, in: version.state)
                let changed = listener.lastResult.withLock { last -> Bool in
                    guard last != result else { return false }
                    last = result
                    return true
                }
                guard changed else { continue }
                if result.estimatedSize > maxEventBytes {
                    Self.revoke(listener, reason: SSEEncoding.payloadTooLarge, registry: &registry)
                } else {
                    listener.buffer.push(ListenerEncoding.queryResult(result, for: listener), sequence: version.sequence)
                }
            }
        }
    }

    /// The groups at, above and below the paths a write changed.
    private static func groups(touchedBy write: ResolvedWrite, in groups: SortedTree<Path, Group>) -> [(Path, Group)] {
        var found: [Path: Group] = [:]
        for changed in write.changedPaths {
            var prefix = Path.root
            if let group = groups[prefix] { found[prefix] = group }
            for key in changed.keys {
                prefix = prefix.child(key)
                if let group = groups[prefix] { found[prefix] = group }
            }
            for (path, group) in groups.entries(from: { Path.compare($0, changed) < 0 }) {
                guard changed.contains(path) else { break }
                found[path] = group
            }
        }
        return Array(found)
    }
}
