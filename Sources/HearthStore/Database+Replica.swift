import Foundation
import HearthCore
import Logging
import Synchronization

// A replica keeps no log of its own: the cluster's ``SharedLog`` orders every write.
//
// State (in `WriterState.replica`, under `writer`):
// - `base` is the shared log applied up to `position`; it is what readers see.
// - `inFlight` are local writes being appended right now, `queued` those after them. Each was
//   checked (rules, conditions, limits) on top of the one before it, starting from `base`, and
//   `pending` is the state after the last.
// - When another node's records arrive first (an append answers `behind`, or an announcement
//   or poll finds them), they are applied to `base` and every local write is checked again on
//   top, so a write is always judged against every write ordered before it, whichever node
//   made it.
//
// One replication task (``Database/runReplication()``) appends and applies; it alone changes
// `base` and `position`, so commit observers see batches in log order. A write completes after
// PostgreSQL committed it and this node applied it (read-your-writes on the node).

extension Database {
    /// A local write waiting for its place in the shared log.
    struct QueuedWrite {
        enum Work {
            case write(Write, pushID: String?, precondition: (@Sendable (DatabaseState) throws -> Void)?, authorize: Authorization?)
            /// An import: the value replaced in one piece in memory, logged as `pieces`.
            case replace(Path, Node, pieces: [ResolvedWrite])
            case setting(name: String, value: String)
        }

        let work: Work
        let completion: Completion
        /// The newest check: what to log, or why the write is refused.
        var checked: Result<[ResolvedWrite], any Error> = .success([])
        /// The state after this write (the state before it when it is refused).
        var stateAfter = DatabaseState()
        var pushID: String? {
            if case .write(_, let pushID, _, _) = work { return pushID }
            return nil
        }
        var isSetting: Bool {
            if case .setting = work { return true }
            return false
        }
    }

    /// A replica's view of the shared log and its local writes.
    struct ReplicaQueue {
        var base: DatabaseState
        var position: Int64
        var settings: [String: String]
        var queued: [QueuedWrite] = []
        var inFlight: [QueuedWrite] = []
        /// Indexes made on this node, kept on every new `base`.
        var indexes: [DatabaseState.IndexID] = []
        var recordsSinceSnapshot = 0
        var bytesSinceSnapshot = 0
        var lastSnapshotBytes = 0
        var snapshotting = false
        var closed = false
        /// True from publishing a new base until its commit observers ran: a refusal made
        /// meanwhile waits in the queue, so the client hears it after the data that caused it.
        var delivering = false
    }

    /// Records read from the shared log per query while catching up.
    static let catchUpPage = 5000
    /// The most records replayed before a replica opens (the rest is followed after).
    static let maxReplayOnOpen = 200_000
    /// The most records a node reads and applies while holding the log's head. Another node's
    /// one append can carry ``maxAppendRecords``: a smaller bound could leave a node behind a
    /// busy one catching up for ever.
    static let maxMissedUnderLock = 50_000
    /// The most records (or bytes) one append carries.
    static let maxAppendRecords = 1000
    static let maxAppendBytes = 16 << 20

    /// Opens a replica of the database `name` kept in `log`: the newest snapshot there, then
    /// every record after it. Run ``runReplication()`` to follow the log and send writes.
    public static func replica(
        name: String, log: any SharedLog, options: DatabaseOptions = DatabaseOptions(), logger: Logger
    ) async throws -> Database {
        var (state, position, settings, snapshotBytes) = try await loadSnapshot(name: name, log: log)
        var replayed = 0
        // Replay a bounded amount: under a busy writer the end of the log keeps moving, and the
        // replication task follows on from wherever opening stopped.
        while replayed < maxReplayOnOpen {
            let records = try await log.records(database: name, after: position, limit: catchUpPage)
            guard let first = records.first else { break }
            if first.sequence != position + 1 {
                // Compacted while we read: start again from the newer snapshot.
                (state, position, settings, snapshotBytes) = try await loadSnapshot(name: name, log: log)
                continue
            }
            for record in records {
                if record.kind == LogRecord.settingKind {
                    settings[record.path] = String(decoding: record.data, as: UTF8.self)
                } else {
                    state = state.applying(try record.write())
                }
                position = record.sequence
            }
            replayed += records.count
        }
        var replica = ReplicaQueue(base: state, position: position, settings: settings)
        replica.recordsSinceSnapshot = replayed
        replica.lastSnapshotBytes = snapshotBytes
        var writer = WriterState(pending: state, nextSequence: position + 1, random: options.makeRandom())
        writer.replica = replica
        logger.debug("replica opened", metadata: ["database": "\(name)", "position": "\(position)", "replayed": "\(replayed)"])
        return Database(
            name: name, options: options, logger: logger, log: nil, shared: log, writer: writer,
            published: Published(state: state, sequence: position))
    }

    private static func loadSnapshot(
        name: String, log: any SharedLog
    ) async throws -> (DatabaseState, Int64, [String: String], Int) {
        guard let snapshot = try await log.newestSnapshot(database: name) else { return (DatabaseState(), 0, [:], 0) }
        let bytes = snapshot.chunks.flatMap { $0 }
        let root = try JSONParser.parse(bytes).node
        return (DatabaseState(root: root), snapshot.sequence, snapshot.settings, bytes.count)
    }

    /// The last shared-log sequence this replica applied (nil for a single-node database).
    public var appliedPosition: Int64? {
        writer.withLock { $0.replica?.position }
    }

    /// Asks the replication task to look for new records (after an announcement, or on a timer
    /// in case one was missed).
    public func poke() {
        wake.yield()
    }

    // MARK: - Local writes

    func enqueueReplica(completion: @escaping Completion, _ prepare: (inout WriterState) -> QueuedWrite.Work) {
        let refused: (any Error)? = writer.withLock { state in
            guard state.replica?.closed == false else {
                return HearthError(.unavailable, "The database is unavailable: the server is stopping.")
            }
            var item = QueuedWrite(work: prepare(&state), completion: completion)
            state.pending = Self.check(&item, on: state.pending, now: options.clock())
            if case .failure(let error) = item.checked, state.replica!.queued.isEmpty, state.replica!.inFlight.isEmpty,
                !state.replica!.delivering
            {
                // Nothing local is ahead of it: refuse at once.
                return error
            }
            state.replica!.queued.append(item)
            return nil
        }
        if let refused {
            completion(.failure(refused))
        } else {
            wake.yield()
        }
    }

    /// Checks `item` on top of `state` and returns the state after it.
    private static func check(_ item: inout QueuedWrite, on state: DatabaseState, now: Int64) -> DatabaseState {
        var next = state
        switch item.work {
        case .write(let write, _, let precondition, let authorize):
            do {
                let (after, resolved) = try state.applying(write, now: now)
                try authorize?(state, after, resolved, now)
                try precondition?(state)
                item.checked = .success([resolved])
                next = after
            } catch {
                item.checked = .failure(error)
            }
        case .replace(let path, let value, let pieces):
            next = state.applying(.set(path, value))
            item.checked = .success(pieces)
        case .setting:
            item.checked = .success([])
        }
        item.stateAfter = next
        return next
    }

    /// Checks every local write again on top of the replica's `base` (after other nodes'
    /// records were applied, or some local writes were dropped).
    private func recheckLocalWrites(_ state: inout WriterState) {
        let now = options.clock()
        var current = state.replica!.base
        for index in state.replica!.inFlight.indices {
            current = Self.check(&state.replica!.inFlight[index], on: current, now: now)
        }
        for index in state.replica!.queued.indices {
            current = Self.check(&state.replica!.queued[index], on: current, now: now)
        }
        state.pending = current
    }

    func addReplicaIndex(_ index: DatabaseState.IndexID, state: inout WriterState) {
        state.replica!.indexes.append(index)
        state.replica!.base = state.replica!.base.addingIndex(at: index.path, order: index.order)
        let base = state.replica!.base
        published.withLock { $0 = Published(state: base, sequence: $0.sequence) }
    }

    // MARK: - Replication

    /// Follows the shared log and sends this node's writes to it until ``close()``: call once,
    /// from the task that owns the replica (the cluster's service).
    public func runReplication() async {
        var failures = 0
        for await _ in wakes {
            do {
                try await replicate()
                failures = 0
            } catch {
                failInFlight(error)
                failures += 1
                if failures == 1 || failures % 100 == 0 {
                    logger.error("shared log unreachable", metadata: ["database": "\(name)", "error": "\(error)"])
                }
                // The next write or poll tries again; a short pause keeps a dead link from spinning.
                try? await Task.sleep(for: .milliseconds(min(50 * failures, 1000)))
            }
            if writer.withLock({ $0.replica!.closed }) { break }
        }
        failEverything(HearthError(.unavailable, "The database is unavailable: the server is stopping."))
    }

    /// Appends local writes and applies other nodes' records until neither is waiting.
    private func replicate() async throws {
        guard let shared else { return }
        while true {
            guard let (position, records) = takeBatch() else {
                try await catchUp()
                if writer.withLock({ $0.replica!.queued.isEmpty }) { return }
                continue
            }
            if records.isEmpty {
                finishInFlight(last: position, bytes: 0)
                continue
            }
            let started = ContinuousClock.now
            switch try await shared.append(database: name, after: position, records: records) {
            case .appended(let last):
                options.onCommit?(name, records.count, ContinuousClock.now - started)
                finishInFlight(last: last, bytes: records.reduce(0) { $0 + $1.data.count })
            case .behind:
                try await appendHoldingHead(after: position)
            }
        }
    }

    /// Another node's append came first. Retrying the same way could lose again and again
    /// while busy nodes keep winning, so this time the node holds the log's head: it reads
    /// what it missed, applies it, checks its batch again on top and appends it, all before
    /// anyone else can append. (When it missed too much to do that under the lock, it catches
    /// up first and the next round tries again.)
    private func appendHoldingHead(after position: Int64) async throws {
        guard let shared else { return }
        let appendedBytes = Mutex(0)
        let started = ContinuousClock.now
        let last = try await shared.appendHoldingHead(database: name, after: position, missedAtMost: Self.maxMissedUnderLock) {
            [self] missed in
            if !missed.isEmpty { try apply(missed) }
            let records = takeBatch(fromQueue: false)?.1 ?? []
            appendedBytes.withLock { $0 = records.reduce(0) { $0 + $1.data.count } }
            return records
        }
        guard let last else {
            // Far behind: catch up by a bounded amount, then the next round holds the head again.
            try await catchUp(atMost: Self.maxMissedUnderLock)
            return
        }
        let bytes = appendedBytes.withLock { $0 }
        if bytes > 0 { options.onCommit?(name, takenCount(), ContinuousClock.now - started) }
        finishInFlight(last: last, bytes: bytes)
    }

    /// How many records the in-flight batch logged (for the commit figures).
    private func takenCount() -> Int {
        writer.withLock { state in
            state.replica!.inFlight.reduce(0) { count, item in
                switch item.checked {
                case .success(let writes): count + writes.count + (item.isSetting ? 1 : 0)
                case .failure: count
                }
            }
        }
    }

    /// Moves queued writes into the in-flight batch (within the append limits) and returns the
    /// position to append after and the records of the whole batch; nil when nothing is local.
    private func takeBatch(fromQueue: Bool = true) -> (Int64, [LogRecord])? {
        writer.withLock { state in
            var replica = state.replica!
            var records: [LogRecord] = []
            var bytes = 0
            func add(_ item: QueuedWrite) {
                switch item.checked {
                case .success(let writes):
                    for write in writes {
                        let record = LogRecord(sequence: 0, write: write)
                        bytes += record.data.count
                        records.append(record)
                    }
                    if case .setting(let name, let value) = item.work {
                        records.append(LogRecord(sequence: 0, kind: LogRecord.settingKind, path: name, data: Array(value.utf8)))
                    }
                case .failure:
                    break
                }
            }
            for item in replica.inFlight { add(item) }
            var taken = 0
            while fromQueue, taken < replica.queued.count, records.count < Self.maxAppendRecords, bytes < Self.maxAppendBytes {
                add(replica.queued[taken])
                taken += 1
            }
            replica.inFlight += replica.queued[..<taken]
            replica.queued.removeFirst(taken)
            state.replica = replica
            return replica.inFlight.isEmpty ? nil : (replica.position, records)
        }
    }

    /// The in-flight batch is in the log ending at `last`: applies it, publishes, and reports
    /// each write's outcome in order.
    private func finishInFlight(last: Int64, bytes: Int) {
        var committed: [Committed] = []
        var outcomes: [(Completion, Result<Committed, any Error>)] = []
        var changedSettings: [String] = []
        let version = writer.withLock { state -> Published in
            var replica = state.replica!
            var sequence = replica.position
            for item in replica.inFlight {
                switch item.checked {
                case .success(let writes):
                    var last: Committed?
                    for write in writes {
                        sequence += 1
                        let entry = Committed(sequence: sequence, write: write, pushID: item.pushID)
                        committed.append(entry)
                        last = entry
                    }
                    if case .setting(let name, let value) = item.work {
                        sequence += 1
                        replica.settings[name] = value
                        changedSettings.append(name)
                        last = Committed(sequence: sequence, write: .update(.root, []), pushID: nil)
                    }
                    if let last { outcomes.append((item.completion, .success(last))) }
                case .failure(let error):
                    outcomes.append((item.completion, .failure(error)))
                }
            }
            precondition(sequence == last, "the shared log answered \(last) for records ending at \(sequence)")
            var base = replica.inFlight.last?.stateAfter ?? replica.base
            for index in replica.indexes where base.index(at: index.path, order: index.order) == nil {
                base = base.addingIndex(at: index.path, order: index.order)
            }
            replica.base = base
            replica.position = last
            replica.inFlight = []
            replica.delivering = true
            state.replica = replica
            let version = Published(state: base, sequence: last)
            published.withLock { $0 = version }
            return version
        }
        if !committed.isEmpty {
            for observer in observers.withLock({ $0 }) { observer(committed, version) }
        }
        writer.withLock { $0.replica!.delivering = false }
        // Settings first: a deploy's caller finds the new rules in force when it resumes.
        notifySettings(changedSettings)
        // Writes queued behind a new setting (the rules) are judged by it.
        if !changedSettings.isEmpty { writer.withLock { recheckLocalWrites(&$0) } }
        for (completion, outcome) in outcomes { completion(outcome) }
        noteApplied(committed.count + changedSettings.count, bytes: bytes)
    }

    /// The shared log could not be reached: the in-flight batch may not have reached it, and
    /// its writes and the local writes checked on top of them are refused as unavailable. (If PostgreSQL did commit it before
    /// the link failed, the records arrive like any other node's.)
    private func failInFlight(_ error: any Error) {
        let failure = HearthError(.unavailable, "The database is unavailable: the cluster's log cannot be reached. Try again.")
        logger.warning("append to the shared log failed", metadata: ["database": "\(name)", "error": "\(error)"])
        let refused = writer.withLock { state -> [QueuedWrite] in
            let refused = state.replica!.inFlight + state.replica!.queued
            state.replica!.inFlight = []
            state.replica!.queued = []
            state.pending = state.replica!.base
            return refused
        }
        for item in refused { item.completion(.failure(failure)) }
    }

    private func failEverything(_ failure: HearthError) {
        let refused = writer.withLock { state -> [QueuedWrite] in
            let refused = state.replica!.inFlight + state.replica!.queued
            state.replica!.inFlight = []
            state.replica!.queued = []
            state.replica!.closed = true
            state.pending = state.replica!.base
            return refused
        }
        for item in refused { item.completion(.failure(failure)) }
    }

    /// Reads and applies every record after this node's position; starts again from the newest
    /// snapshot when the records it needs were compacted away.
    private func catchUp(atMost limit: Int = .max) async throws {
        guard let shared else { return }
        var applied = 0
        while applied < limit {
            let position = writer.withLock { $0.replica!.position }
            let records = try await shared.records(database: name, after: position, limit: Self.catchUpPage)
            guard let first = records.first else { return }
            if first.sequence != position + 1 {
                try await resync()
                continue
            }
            try apply(records)
            applied += records.count
            if records.count < Self.catchUpPage { return }
        }
    }

    /// Applies other nodes' records (in order, right after this node's position), then checks
    /// the local writes again on top. A setting (the rules) takes effect where it is in the
    /// log: its observers run before anything after it is applied or checked.
    private func apply(_ records: [LogRecord]) throws {
        var segment: [LogRecord] = []
        for record in records {
            segment.append(record)
            if record.kind == LogRecord.settingKind {
                try applySegment(segment)
                segment = []
            }
        }
        if !segment.isEmpty { try applySegment(segment) }
        noteApplied(records.count, bytes: records.reduce(0) { $0 + $1.data.count })
    }

    private func applySegment(_ records: [LogRecord]) throws {
        var writes: [(Int64, ResolvedWrite)] = []
        for record in records where record.kind != LogRecord.settingKind {
            writes.append((record.sequence, try record.write()))
        }
        var committed: [Committed] = []
        var changedSettings: [String] = []
        let version = writer.withLock { state -> Published? in
            guard state.replica!.position == records[0].sequence - 1 else { return nil }
            var base = state.replica!.base
            var next = writes.makeIterator()
            for record in records {
                if record.kind == LogRecord.settingKind {
                    state.replica!.settings[record.path] = String(decoding: record.data, as: UTF8.self)
                    changedSettings.append(record.path)
                } else if let (sequence, write) = next.next() {
                    base = base.applying(write)
                    committed.append(Committed(sequence: sequence, write: write, pushID: nil))
                }
            }
            state.replica!.base = base
            state.replica!.position = records[records.count - 1].sequence
            state.replica!.delivering = true
            recheckLocalWrites(&state)
            let version = Published(state: base, sequence: state.replica!.position)
            published.withLock { $0 = version }
            return version
        }
        guard let version else { return }
        if !committed.isEmpty {
            for observer in observers.withLock({ $0 }) { observer(committed, version) }
        }
        writer.withLock { $0.replica!.delivering = false }
        notifySettings(changedSettings)
        // The rules may have changed: local writes are judged by the new ones.
        if !changedSettings.isEmpty { writer.withLock { recheckLocalWrites(&$0) } }
    }

    /// Replaces the replica's state with the newest snapshot: listeners get the whole tree as
    /// one write at the snapshot's position.
    private func resync() async throws {
        guard let shared else { return }
        let (state, position, settings, bytes) = try await Self.loadSnapshot(name: name, log: shared)
        logger.warning("replica fell behind the compacted log; resyncing from a snapshot", metadata: [
            "database": "\(name)", "snapshot": "\(position)",
        ])
        let version = writer.withLock { writer -> Published? in
            guard position > writer.replica!.position else { return nil }
            var base = state
            for index in writer.replica!.indexes { base = base.addingIndex(at: index.path, order: index.order) }
            writer.replica!.base = base
            writer.replica!.position = position
            writer.replica!.settings = settings
            writer.replica!.recordsSinceSnapshot = 0
            writer.replica!.bytesSinceSnapshot = 0
            writer.replica!.lastSnapshotBytes = bytes
            writer.replica!.delivering = true
            recheckLocalWrites(&writer)
            let version = Published(state: base, sequence: position)
            published.withLock { $0 = version }
            return version
        }
        guard let version else { return }
        let whole = Committed(sequence: position, write: .set(.root, version.state.root), pushID: nil)
        for observer in observers.withLock({ $0 }) { observer([whole], version) }
        writer.withLock { $0.replica!.delivering = false }
        notifySettings(Array(settings.keys))
        // Local writes are judged by the rules the snapshot holds.
        writer.withLock { recheckLocalWrites(&$0) }
    }

    private func notifySettings(_ names: [String]) {
        guard !names.isEmpty else { return }
        let observers = settingObservers.withLock { $0 }
        for name in Set(names) {
            for observer in observers { observer(name) }
        }
    }

    // MARK: - Snapshots

    /// Counts applied records; once enough built up, this node offers the cluster a snapshot
    /// (the shared log lets one node at a time store one).
    private func noteApplied(_ count: Int, bytes: Int) {
        let start = writer.withLock { state -> Bool in
            guard var replica = state.replica else { return false }
            replica.recordsSinceSnapshot += count
            replica.bytesSinceSnapshot += bytes
            let due = replica.recordsSinceSnapshot >= options.snapshotAfterWrites
                || replica.bytesSinceSnapshot >= max(options.snapshotAfterBytes, replica.lastSnapshotBytes)
            let start = due && !replica.snapshotting && !replica.closed
            if start { replica.snapshotting = true }
            state.replica = replica
            return start
        }
        if start {
            Task {
                do {
                    try await self.storeSharedSnapshot(force: false)
                } catch {
                    self.logger.error("could not store a snapshot in the cluster", metadata: ["database": "\(self.name)", "error": "\(error)"])
                }
            }
        }
    }

    /// Stores a snapshot of this replica's state in the shared log (which drops the log behind
    /// the previous snapshot), unless another node is storing one or a newer one exists.
    /// - Parameter force: false when the node's counters asked for it: it then declines when
    ///   another node stored one less than half a threshold ago.
    /// - Returns: true when this node stored it.
    @discardableResult
    public func storeSharedSnapshot(force: Bool = true) async throws -> Bool {
        guard let shared else { return false }
        let counted = writer.withLock { state -> Int in
            state.replica!.snapshotting = true
            return state.replica!.recordsSinceSnapshot
        }
        defer { writer.withLock { $0.replica!.snapshotting = false } }
        let taken = Mutex<(sequence: Int64, bytes: Int)?>(nil)
        let declinedAt = Mutex<Int64?>(nil)
        let stored = try await shared.storeSnapshot(database: name) { [self] newest in
            let (version, settings) = writer.withLock { state in
                (published.withLock { $0 }, state.replica!.settings)
            }
            if !force, version.sequence - newest < Int64(max(1, min(counted, options.snapshotAfterWrites) / 2)) {
                declinedAt.withLock { $0 = newest }
                return nil
            }
            let chunks = try await withCheckedThrowingContinuation { continuation in
                // Serializing a large tree takes a while: off the cooperative pool.
                snapshotQueue.async {
                    var chunks: [[UInt8]] = []
                    var writer = JSONWriter(format: .init(export: true), chunkSize: 4 << 20) { chunks.append(Array($0)) }
                    do {
                        try writer.writeFlushing(version.state.root)
                        continuation.resume(returning: chunks)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            taken.withLock { $0 = (version.sequence, chunks.reduce(0) { $0 + $1.count }) }
            return SharedSnapshot(sequence: version.sequence, chunks: chunks, settings: settings)
        }
        let snapshot = taken.withLock { $0 }
        let newest = declinedAt.withLock { $0 }
        writer.withLock { state in
            // What was applied since the newest snapshot (this one, or another node's) counts
            // towards the next one.
            if let base = snapshot?.sequence ?? newest {
                state.replica!.recordsSinceSnapshot = Int(max(0, state.replica!.position - base))
            } else {
                state.replica!.recordsSinceSnapshot = 0
            }
            state.replica!.bytesSinceSnapshot = 0
            if let snapshot { state.replica!.lastSnapshotBytes = snapshot.bytes }
        }
        if stored, let snapshot {
            logger.info("snapshot stored in the cluster", metadata: [
                "database": "\(name)", "sequence": "\(snapshot.sequence)", "bytes": "\(snapshot.bytes)",
            ])
        }
        return stored
    }

    /// Stops the replication task; local writes not yet in the log are refused.
    func closeReplica() {
        writer.withLock { $0.replica!.closed = true }
        wake.yield()
        wake.finish()
    }
}
