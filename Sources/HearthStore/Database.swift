import Dispatch
import Foundation
import HearthCore
import Logging
import Synchronization

/// One database (namespace): the current tree, the single writer that orders every write, and
/// the durable log behind it.
///
/// A write is checked and applied, in arrival order, to the newest version (which includes
/// every earlier write, committed or not), then queued for the log. One commit loop writes all
/// queued records in a single SQLite transaction (group commit); only after that commit is the
/// new version published to readers and the writers' calls return. Readers take the published
/// version without waiting for the writer.
///
/// A database opened with ``replica(name:log:options:logger:)`` keeps its log in a cluster's
/// ``SharedLog`` instead (see `Database+Replica.swift`): writes are checked the same way, then
/// appended to the shared log after the position this node has applied, and checked again
/// whenever another node's writes got there first.
///
/// Threading: `writer` guards the writing state and is never held across a suspension or I/O;
/// `published` is taken briefly by readers. Commit observers run on the commit thread (the
/// replication task for a replica), one batch at a time, in log order.
public final class Database: Sendable {
    /// A write that reached the disk.
    public struct Committed: Sendable {
        /// The write's place in the log.
        public let sequence: Int64
        /// The write with server values resolved, as logged.
        public let write: ResolvedWrite
        /// The push ID, for writes made by ``push(at:value:)``.
        public let pushID: String?
    }

    /// The published version and the sequence number of its last write.
    public struct Published: Sendable {
        public let state: DatabaseState
        public let sequence: Int64
    }

    struct Pending {
        let record: LogRecord
        let committed: Committed
        let completion: Completion?
    }

    struct WriterState {
        var pending: DatabaseState
        var nextSequence: Int64
        var batch: [Pending] = []
        var committing = false
        var republish = false
        /// Set while storage is failing: writes are refused until `retryAt` (the clock's ms),
        /// then the next write tries the disk again.
        var failure: (error: HearthError, retryAt: Int64)?
        /// Set by ``close()``: a write through a reference kept past it is refused (the next
        /// open of the same folder is another instance, the only writer).
        var closed = false
        var pushIDs = PushIDGenerator()
        var random: any RandomNumberGenerator
        var writesSinceSnapshot = 0
        var bytesSinceSnapshot = 0
        var lastSnapshotBytes = 0
        var snapshotting = false
        /// Refused writes whose refusal waits for the writes queued before them to be
        /// published: `(the last of those, its completion, the error)`.
        var deferredFailures: [(after: Int64, completion: Completion, error: any Error)] = []
        /// For a replica: the shared log's state on this node and its local writes.
        var replica: ReplicaQueue?
    }

    /// The database's name.
    public let name: String
    let options: DatabaseOptions
    /// The local log (single node), or nil for a replica.
    let log: WriteLog?
    /// The cluster's log, for a replica.
    let shared: (any SharedLog)?
    let logger: Logger
    let writer: Mutex<WriterState>
    let published: Mutex<Published>
    let observers = Mutex<[@Sendable ([Committed], Published) -> Void]>([])
    let settingObservers = Mutex<[@Sendable (String) -> Void]>([])
    let commitQueue: DispatchQueue
    let snapshotQueue: DispatchQueue
    /// Wakes a replica's replication task (local writes, announcements, polls).
    let wake: AsyncStream<Void>.Continuation
    let wakes: AsyncStream<Void>

    /// Opens (or creates) the database stored in `folder`: loads the newest snapshot and
    /// replays the log after it.
    public convenience init(name: String, folder: URL, options: DatabaseOptions = DatabaseOptions(), logger: Logger) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let log = try WriteLog(folder: folder)
        var state = DatabaseState()
        var sequence: Int64 = 0
        var snapshotBytes = 0
        if let snapshot = try log.newestSnapshot() {
            state = DatabaseState(root: try JSONParser.parse(snapshot.bytes).node)
            sequence = snapshot.sequence
            snapshotBytes = snapshot.bytes.count
        }
        var replayed = 0
        var replayedBytes = 0
        try log.forEachRecord(after: sequence) { record in
            state = state.applying(try record.write())
            sequence = record.sequence
            replayed += 1
            replayedBytes += record.data.count
        }
        self.init(
            name: name, options: options, logger: logger, log: log, shared: nil,
            writer: WriterState(
                pending: state, nextSequence: sequence + 1, random: options.makeRandom(),
                writesSinceSnapshot: replayed, bytesSinceSnapshot: replayedBytes, lastSnapshotBytes: snapshotBytes),
            published: Published(state: state, sequence: sequence))
        logger.debug("database opened", metadata: ["database": "\(name)", "sequence": "\(sequence)", "replayed": "\(replayed)"])
    }

    init(
        name: String, options: DatabaseOptions, logger: Logger, log: WriteLog?, shared: (any SharedLog)?,
        writer: sending WriterState, published: Published
    ) {
        self.name = name
        self.options = options
        self.logger = logger
        self.log = log
        self.shared = shared
        self.commitQueue = DispatchQueue(label: "hearth.commit.\(name)")
        self.snapshotQueue = DispatchQueue(label: "hearth.snapshot.\(name)", qos: .utility)
        self.writer = Mutex(writer)
        self.published = Mutex(published)
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
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
    public func queryValue(_ query: Query, at path: Path) -> Node {
        if query.usesIndex && current.state.index(at: path, order: query.order) == nil {
            ensureIndex(at: path, order: query.order)
        }
        return current.state.queryValue(query, at: path)
    }

    /// Starts keeping an index for `order` at `path`.
    public func ensureIndex(at path: Path, order: Query.Order) {
        writer.withLock { state in
            guard state.pending.index(at: path, order: order) == nil else { return }
            state.pending = state.pending.addingIndex(at: path, order: order)
            if state.replica != nil {
                addReplicaIndex(DatabaseState.IndexID(path: path, order: order), state: &state)
            } else if state.committing || !state.batch.isEmpty {
                state.republish = true
            } else {
                let pending = state.pending
                published.withLock { $0 = Published(state: pending, sequence: $0.sequence) }
            }
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
    /// - Throws: ``HearthError`` when the write is invalid or storage is failing.
    @discardableResult
    public func write(
        _ write: Write,
        precondition: (@Sendable (DatabaseState) throws -> Void)? = nil,
        authorize: Authorization? = nil
    ) async throws -> Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submit(write, precondition: precondition, authorize: authorize) { continuation.resume(with: $0) }
        }
    }

    /// Called once with a write's outcome: committed (durable), or refused or failed.
    public typealias Completion = @Sendable (Result<Committed, any Error>) -> Void

    /// Queues a write at once, in the order of the calls, and reports its outcome to
    /// `completion` when it is durable (on the commit thread: keep `completion` short). For
    /// transports that pipeline a connection's writes without a task per write.
    /// - Parameters: as for ``write(_:precondition:authorize:)``.
    public func submit(
        _ write: Write,
        precondition: (@Sendable (DatabaseState) throws -> Void)? = nil,
        authorize: Authorization? = nil,
        completion: @escaping Completion
    ) {
        enqueue(precondition: precondition, authorize: authorize, completion: completion) { _ in (write, nil) }
    }

    /// Queues a push at once (as ``submit(_:precondition:authorize:completion:)`` does a write).
    public func submitPush(
        at path: Path, value: JSONParser.Parsed, authorize: Authorization? = nil, completion: @escaping Completion
    ) {
        let now = options.clock()
        enqueue(precondition: nil, authorize: authorize, completion: completion) { state in
            let name = state.pushIDs.next(now: now, using: &state.random)
            return (.set(path.child(ChildKey(name)), value), name)
        }
    }

    /// Checks a write before it is applied: `(before, after, write, now)`; throwing refuses it.
    public typealias Authorization = @Sendable (DatabaseState, DatabaseState, ResolvedWrite, Int64) throws -> Void

    /// Stores `value` under a new push ID at `path` and returns once it is durable.
    /// - Parameter authorize: as for ``write(_:precondition:authorize:)``.
    @discardableResult
    public func push(at path: Path, value: JSONParser.Parsed, authorize: Authorization? = nil) async throws -> Committed {
        try await withUnsafeThrowingContinuation { continuation in
            submitPush(at: path, value: value, authorize: authorize) { continuation.resume(with: $0) }
        }
    }

    /// Replaces the value at `path` with `value` as one atomic, durable write, however large:
    /// the write is logged as several bounded records committed in one transaction. For
    /// imports; the value must already be valid data.
    public func replace(at path: Path, with value: Node, maxRecordBytes: Int = 8 << 20) async throws {
        let pieces = ResolvedWrite.chunkedSet(value, at: path, maxBytes: maxRecordBytes)
        if shared != nil {
            _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Committed, any Error>) in
                enqueueReplica(completion: { continuation.resume(with: $0) }) { _ in .replace(path, value, pieces: pieces) }
            }
            return
        }
        var remaining = pieces.count
        // Every piece joins the same batch (they are queued under one lock hold), so they
        // commit in one transaction; the last continuation reports the outcome.
        _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Committed, any Error>) in
            let reportOutcome: Completion = { continuation.resume(with: $0) }
            let startCommit = writer.withLock { state -> Bool in
                if let failure = refusalWhileStorageFails(&state) {
                    continuation.resume(throwing: failure)
                    return false
                }
                // The pieces are for the log; in memory the value goes in as one set.
                state.pending = state.pending.applying(.set(path, value))
                for piece in pieces {
                    remaining -= 1
                    let sequence = state.nextSequence
                    state.nextSequence += 1
                    let committed = Committed(sequence: sequence, write: piece, pushID: nil)
                    let pending = Pending(
                        record: LogRecord(sequence: sequence, write: piece), committed: committed,
                        completion: remaining == 0 ? reportOutcome : nil
                    )
                    state.batch.append(pending)
                }
                if state.committing { return false }
                state.committing = true
                return true
            }
            if startCommit { commitQueue.async { self.commitLoop() } }
        }
    }

    private func enqueue(
        precondition: (@Sendable (DatabaseState) throws -> Void)?,
        authorize: Authorization?,
        completion: @escaping Completion,
        _ prepare: (inout WriterState) -> (Write, String?)
    ) {
        if shared != nil {
            enqueueReplica(completion: completion) { state in
                let (write, pushID) = prepare(&state)
                return .write(write, pushID: pushID, precondition: precondition, authorize: authorize)
            }
            return
        }
        let startCommit = writer.withLock { state -> Bool in
            if let failure = refusalWhileStorageFails(&state) {
                completion(.failure(failure))
                return false
            }
            do {
                let (write, pushID) = prepare(&state)
                let now = options.clock()
                let (next, resolved) = try state.pending.applying(write, now: now)
                // The rules judge first: a condition's answer (and the value it carries) is
                // for writers the rules admit, never an oracle for anyone else.
                try authorize?(state.pending, next, resolved, now)
                if let precondition { try precondition(state.pending) }
                let sequence = state.nextSequence
                state.nextSequence += 1
                state.pending = next
                let committed = Committed(sequence: sequence, write: resolved, pushID: pushID)
                state.batch.append(Pending(
                    record: LogRecord(sequence: sequence, write: resolved), committed: committed, completion: completion
                ))
            } catch {
                // A refusal is reported after the writes queued before it are published (and
                // their commit observers ran), so a client told its condition failed has been
                // sent the write that made it fail.
                if state.committing {
                    state.deferredFailures.append((state.nextSequence - 1, completion, error))
                } else {
                    completion(.failure(error))
                }
                return false
            }
            if state.committing { return false }
            state.committing = true
            return true
        }
        if startCommit { commitQueue.async { self.commitLoop() } }
    }

    /// Commits batches until none is waiting. Runs on `commitQueue` only.
    private func commitLoop() {
        while true {
            let taken = writer.withLock { state -> ([Pending], DatabaseState)? in
                if state.batch.isEmpty {
                    state.committing = false
                    // Everything queued is published: no refusal waits any longer.
                    for failure in state.deferredFailures { failure.completion(.failure(failure.error)) }
                    state.deferredFailures = []
                    if state.republish {
                        state.republish = false
                        let pending = state.pending
                        published.withLock { $0 = Published(state: pending, sequence: $0.sequence) }
                    }
                    return nil
                }
                let batch = state.batch
                state.batch = []
                return (batch, state.pending)
            }
            guard let (batch, state) = taken else { return }
            do {
                let started = ContinuousClock.now
                try log!.append(batch.map(\.record), at: options.clock())
                options.onCommit?(name, batch.count, ContinuousClock.now - started)
            } catch {
                fail(batch: batch, error: error)
                return
            }
            let version = Published(state: state, sequence: batch[batch.count - 1].record.sequence)
            published.withLock { $0 = version }
            let committed = batch.map(\.committed)
            for observer in observers.withLock({ $0 }) { observer(committed, version) }
            for pending in batch { pending.completion?(.success(pending.committed)) }
            let ready = writer.withLock { state -> [(after: Int64, completion: Completion, error: any Error)] in
                let ready = state.deferredFailures.filter { $0.after <= version.sequence }
                state.deferredFailures.removeAll { $0.after <= version.sequence }
                return ready
            }
            for failure in ready { failure.completion(.failure(failure.error)) }
            noteLogged(batch)
        }
    }

    /// Storage failed (a full disk, an I/O error): the batch and everything queued behind it
    /// are refused with `unavailable`, and the database falls back to its last published
    /// version. Writes are refused for ``DatabaseOptions/storageRetryInterval``; then the next
    /// write tries the disk again, so writes resume by themselves once it works.
    private func fail(batch: [Pending], error: any Error) {
        logger.critical("write log commit failed; refusing writes until storage works again", metadata: [
            "database": "\(name)", "error": "\(error)",
        ])
        let failure = HearthError(.unavailable, "The database is unavailable: its storage failed. Try again later.")
        let stranded = writer.withLock { state -> [Pending] in
            state.failure = (failure, options.clock() + options.storageRetryInterval)
            let published = published.withLock { $0 }
            state.pending = published.state
            // Nothing after the published version was logged, so its sequence numbers are reused.
            state.nextSequence = published.sequence + 1
            state.committing = false
            let rest = state.batch
            state.batch = []
            for deferred in state.deferredFailures { deferred.completion(.failure(deferred.error)) }
            state.deferredFailures = []
            return rest
        }
        for pending in batch + stranded { pending.completion?(.failure(failure)) }
    }

    /// The error to refuse a write with while storage is failing, or nil when the write may try.
    private func refusalWhileStorageFails(_ state: inout WriterState) -> HearthError? {
        if state.closed { return HearthError(.unavailable, "The database was closed while idle. Try again.") }
        guard let failure = state.failure else { return nil }
        if options.clock() < failure.retryAt { return failure.error }
        state.failure = nil
        return nil
    }

    // MARK: - Settings

    /// A stored setting of this database (such as its rules document), or nil.
    public func setting(named name: String) throws -> String? {
        if let replica = writer.withLock({ $0.replica }) { return replica.settings[name] }
        return try log!.setting(named: name)
    }

    /// Stores a setting durably: on disk, or in a replica's shared log and applied on this node,
    /// when this returns. Setting observers run on every node that applies it.
    public func setSetting(named name: String, to value: String) async throws {
        guard shared != nil else {
            try log!.setSetting(named: name, to: value)
            for observer in settingObservers.withLock({ $0 }) { observer(name) }
            return
        }
        _ = try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Committed, any Error>) in
            enqueueReplica(completion: { continuation.resume(with: $0) }) { _ in .setting(name: name, value: value) }
        }
    }

    /// Calls `observer` with a setting's name after it changed (on a replica, also when another
    /// node changed it).
    public func addSettingObserver(_ observer: @escaping @Sendable (String) -> Void) {
        settingObservers.withLock { $0.append(observer) }
    }

    // MARK: - Observing

    /// Calls `observer` after every commit with the writes committed and the new version, on
    /// the commit thread, in commit order. It must return quickly.
    public func addCommitObserver(_ observer: @escaping @Sendable ([Committed], Published) -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
