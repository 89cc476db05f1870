import Foundation
import HearthCore
import HearthOutbox
import Logging
import Synchronization

/// One database (namespace): the current tree, the single writer that orders every write, and
/// the durable log behind it.
///
/// A write is checked (limits, security rules, conditions; server values resolved) in arrival
/// order against the newest version, which includes every earlier write, committed or not, then
/// queued for the log. The log makes the queued writes durable in batches; only then is the new
/// version published to readers, delivered to ``events``' subscribers, and the writers' calls
/// answered. Readers take the published version without waiting for the writer.
///
/// There is one writer (`Database+Writer.swift`) and one mode per log behind it
/// (`DatabaseLog.swift`): a database opened from a folder keeps a `LocalLog` (SQLite; group
/// commit of everything that arrived during the previous commit); one opened with
/// ``replica(name:log:options:events:logger:)`` keeps a `ReplicaLog` over a cluster's
/// ``SharedLog``, appends after the position this node has applied, and checks its writes again
/// whenever another node's writes got there first.
///
/// Threading: `writer` guards the writing state and is never held across a suspension, I/O or
/// a subscriber; a write takes it once. `published` is taken inside it to publish and briefly by
/// readers. The log's drainer (a single node's commit queue, or a replica's replication task)
/// commits batches one at a time, and delivers their events and answers on its own thread, in
/// log order.
public final class Database: Sendable {
    /// A write that reached the disk.
    public struct Committed: Sendable {
        /// The write's place in the log.
        public let sequence: Int64
        /// The write with server values resolved, as logged.
        public let write: ResolvedWrite
        /// The push ID, for writes made by ``push(at:value:authorize:)``.
        public let pushID: String?
    }

    /// The published version and the sequence number of its last write.
    public struct Published: Sendable {
        /// The tree as of `sequence`.
        public let state: DatabaseState
        /// The last write this version includes.
        public let sequence: Int64
    }

    /// The database's name.
    public let name: String
    let options: DatabaseOptions
    let logger: Logger
    /// Where this database's commits and setting changes are published: its provider's stream
    /// (shared by the databases it opens), or one of its own.
    public let events: DatabaseEvents
    /// The log behind the writer.
    let log: any DatabaseLog

    /// Where the events its writes recorded (``DatabaseOptions/eventRecorder``) wait for
    /// delivery, in the log's own file; nil for a cluster's replica, which records none.
    public var outbox: (any EventOutbox)? { log.outbox }
    let writer: Mutex<WriterState>
    let published: Mutex<Published>

    /// Opens (or creates) the database stored in `folder`: loads the newest snapshot and
    /// replays the log after it.
    /// - Parameter events: where its commits and setting changes go (a ``DataFolder`` passes its own).
    public convenience init(
        name: String, folder: URL, options: DatabaseOptions = DatabaseOptions(), events: DatabaseEvents = DatabaseEvents(),
        logger: Logger
    ) throws {
        let (log, opened) = try LocalLog.open(folder: folder, name: name)
        self.init(name: name, log: log, opened: opened, options: options, events: events, logger: logger)
        logger.debug("database opened", metadata: [
            "database": "\(name)", "sequence": "\(opened.position)", "replayed": "\(opened.snapshots.records)",
        ])
    }

    /// Opens a replica of the database `name` kept in `log`: the newest snapshot there, then
    /// every record after it (a bounded number; the rest is followed after). Run
    /// ``runReplication()`` to follow the log and send writes.
    /// - Parameter events: where its commits and setting changes go (a cluster's provider passes its own).
    public static func replica(
        name: String, log: any SharedLog, options: DatabaseOptions = DatabaseOptions(), events: DatabaseEvents = DatabaseEvents(),
        logger: Logger
    ) async throws -> Database {
        let (replica, opened) = try await ReplicaLog.open(name: name, log: log)
        logger.debug("replica opened", metadata: [
            "database": "\(name)", "position": "\(opened.position)", "replayed": "\(opened.snapshots.records)",
        ])
        return Database(name: name, log: replica, opened: opened, options: options, events: events, logger: logger)
    }

    init(name: String, log: any DatabaseLog, opened: Opened, options: DatabaseOptions, events: DatabaseEvents, logger: Logger) {
        self.name = name
        self.options = options
        self.logger = logger
        self.events = events
        self.log = log
        var state = WriterState(
            base: opened.state, position: opened.position, pending: opened.state, settings: opened.settings,
            random: options.makeRandom())
        state.snapshots = opened.snapshots
        self.writer = Mutex(state)
        self.published = Mutex(Published(state: opened.state, sequence: opened.position))
    }

    // MARK: - Reading

    /// The newest committed version.
    public var current: Published {
        published.withLock { $0 }
    }

    /// The value at `path` in the newest committed version.
    public func value(at path: Path) -> Node {
        current.state.value(at: path)
    }

    /// Runs `query` at `path`, building an index for it first when `index` is true and none
    /// exists yet (after that, the index is kept up to date by every write).
    public func run(_ query: Query, at path: Path, index: Bool = true) -> [(key: ChildKey, value: Node)] {
        if index && query.usesIndex && current.state.index(at: path, order: query.order) == nil {
            ensureIndex(at: path, order: query.order)
        }
        return current.state.run(query, at: path)
    }

    /// The result of `query` at `path` as the object REST returns, indexing as ``run(_:at:index:)`` does.
    func queryValue(_ query: Query, at path: Path) -> Node {
        if query.usesIndex && current.state.index(at: path, order: query.order) == nil {
            ensureIndex(at: path, order: query.order)
        }
        return current.state.queryValue(query, at: path)
    }

    /// Starts keeping an index for `order` at `path`: the published version has it when this
    /// returns, and every later version keeps it up to date.
    public func ensureIndex(at path: Path, order: Query.Order) {
        writer.withLock { state in
            guard state.pending.index(at: path, order: order) == nil else { return }
            state.indexes.append(DatabaseState.IndexID(path: path, order: order))
            state.pending = state.pending.addingIndex(at: path, order: order)
            if state.queued.isEmpty && state.inFlight.isEmpty {
                // Nothing is queued: the pending version is the published one.
                state.base = state.pending
            } else {
                // Writes checked before now made states without it: finishing them adds it back.
                state.indexesBehind = true
                if state.base.index(at: path, order: order) == nil { state.base = state.base.addingIndex(at: path, order: order) }
            }
            let base = state.base
            published.withLock { $0 = Published(state: base, sequence: $0.sequence) }
        }
    }

    // MARK: - Writing

    /// Applies a write and returns once it is durable.
    ///
    /// - Parameters:
    ///   - precondition: checked against the newest version, in write order, after `authorize`
    ///     admitted the write and before it is applied (for conditional requests); throwing
    ///     rejects the write.
    ///   - authorize: checked in write order with the newest version, the version the write
    ///     would make, the resolved write and the time its server values got (for security
    ///     rules); throwing rejects the write and changes nothing.
    ///   - origin: who makes it, for the events it records (``DatabaseOptions/eventRecorder``).
    /// - Throws: ``HearthError`` when the write is invalid or storage is failing.
    @discardableResult
    public func write(
        _ write: Write,
        precondition: (@Sendable (DatabaseState) throws -> Void)? = nil,
        authorize: Authorization? = nil,
        origin: WriteOrigin = .unknown
    ) async throws -> Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submit(write, precondition: precondition, authorize: authorize, origin: origin) { continuation.resume(with: $0) }
        }
    }

    /// Called once with a write's outcome: committed (durable), or refused or failed.
    public typealias Completion = @Sendable (Result<Committed, any Error>) -> Void

    /// Queues a write at once, in the order of the calls, and reports its outcome to
    /// `completion` when it is durable (on the log's thread: keep `completion` short). For
    /// transports that pipeline a connection's writes without a task per write.
    /// - Parameters: as for ``write(_:precondition:authorize:origin:)``.
    public func submit(
        _ write: Write,
        precondition: (@Sendable (DatabaseState) throws -> Void)? = nil,
        authorize: Authorization? = nil,
        origin: WriteOrigin = .unknown,
        completion: @escaping Completion
    ) {
        enqueue(origin: origin, completion: completion) { _ in .write(write, pushID: nil, precondition: precondition, authorize: authorize) }
    }

    /// Queues a push at once (as ``submit(_:precondition:authorize:origin:completion:)`` does a write).
    func submitPush(
        at path: Path, value: JSONParser.Parsed, authorize: Authorization? = nil, origin: WriteOrigin = .unknown,
        completion: @escaping Completion
    ) {
        let now = options.clock()
        enqueue(origin: origin, completion: completion) { state in
            let name = state.pushIDs.next(now: now, using: &state.random)
            return .write(.set(path.child(ChildKey(name)), value), pushID: name, precondition: nil, authorize: authorize)
        }
    }

    /// Checks a write before it is applied: `(before, after, write, now)`; throwing refuses it.
    public typealias Authorization = @Sendable (DatabaseState, DatabaseState, ResolvedWrite, Int64) throws -> Void

    /// Stores `value` under a new push ID at `path` and returns once it is durable.
    /// - Parameters: `authorize` and `origin` as for ``write(_:precondition:authorize:origin:)``.
    @discardableResult
    public func push(
        at path: Path, value: JSONParser.Parsed, authorize: Authorization? = nil, origin: WriteOrigin = .unknown
    ) async throws -> Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submitPush(at: path, value: value, authorize: authorize, origin: origin) { continuation.resume(with: $0) }
        }
    }

    /// Replaces the value at `path` with `value` as one atomic, durable write, however large:
    /// the write is logged as several bounded records appended together (one transaction). For
    /// imports; the value must already be valid data.
    public func replace(at path: Path, with value: Node, maxRecordBytes: Int = 8 << 20) async throws {
        let pieces = ResolvedWrite.chunkedSet(value, at: path, maxBytes: maxRecordBytes)
        let records = pieces.map { LogRecord(sequence: 0, write: $0) }
        _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Committed, any Error>) in
            enqueue(completion: { continuation.resume(with: $0) }) { _ in .replace(path, value, pieces: pieces, records: records) }
        }
    }

    // MARK: - Settings

    /// A stored setting of this database (such as its rules document), or nil.
    public func setting(named name: String) throws -> String? {
        writer.withLock { $0.settings[name] }
    }

    /// Stores a setting durably: on disk beside a single node's log, or in a replica's shared
    /// log and applied on this node, when this returns. Every node that applies it publishes
    /// ``DatabaseEvent/settingChanged(_:)``.
    public func setSetting(named name: String, to value: String) async throws {
        try await log.storeSetting(named: name, to: value, in: self)
    }

    // MARK: - The log's own work

    /// Writes a snapshot of the published version now and waits for it (a single node; a
    /// replica's snapshots are the cluster's, see ``storeSharedSnapshot(force:)``).
    func snapshot() {
        log.snapshotNow(of: self)
    }

    /// Stores a snapshot of this replica's state in the shared log (which drops the log behind
    /// the previous snapshot), unless another node is storing one or a newer one exists; false
    /// on a single node.
    /// - Parameter force: false when the node's counters asked for it: it then declines when
    ///   another node stored one less than half a threshold ago.
    /// - Returns: true when this node stored it.
    @discardableResult
    public func storeSharedSnapshot(force: Bool = true) async throws -> Bool {
        try await log.storeSharedSnapshot(of: self, force: force)
    }

    /// Follows the shared log and sends this node's writes to it until ``close()``: call once,
    /// from the task that owns the replica (the cluster's service). Returns at once for a
    /// single node, whose log needs no task.
    public func runReplication() async {
        await log.run(self)
    }

    /// Asks the replication task to look for new records (after an announcement, or on a timer
    /// in case one was missed).
    public func poke() {
        log.wake()
    }

    /// The last shared-log sequence this replica applied (nil for a single-node database).
    public var appliedPosition: Int64? {
        log.appliedPosition(of: self)
    }

    /// A single node waits for in-flight commits, then writes a final snapshot if the log has
    /// grown since the last one, so the next start replays little. A replica stops its
    /// replication task; local writes not yet in the log are refused.
    public func close() {
        log.close(self)
    }
}
