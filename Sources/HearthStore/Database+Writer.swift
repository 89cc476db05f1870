import HearthCore
import HearthOutbox
import Synchronization

// The checking writer: the one code path that orders a database's writes, whichever log is
// behind it (see `DatabaseLog.swift`).
//
// State (`WriterState`, under `writer`):
// - `base` is the log applied up to `position`: the version readers see.
// - `inFlight` are writes the log is making durable now, `queued` those after them. Each was
//   checked (limits, rules, conditions, server values resolved) on top of the one before it,
//   starting from `base`; `pending` is the state after the last. A refused write keeps its
//   place in the queue, so its refusal is reported after the writes ordered before it were
//   published and their events delivered (a client told its condition failed has been sent
//   the write that made it fail); with nothing ahead of it, it is refused at once.
// - The log drains the queue in batches (`takeBatch`): all of it for a local log (group
//   commit: one SQLite transaction for everything that arrived during the previous commit),
//   at most `ReplicaLog.maxAppendRecords` for a replica. A durable batch is applied to `base`,
//   published, delivered as one event, and its writers answered in order (`finishInFlight`).
//
// What differs between the modes is the log's, not the writer's:
// - A local log is this writer's alone, so a write's first check is its last: the log
//   appends exactly the batch it took, at the position the writer numbered it.
// - A shared log has other writers. When another node's records got there first, the replica
//   log hands them to the writer (`applyLogged`), which applies them to `base` and checks every
//   queued and in-flight write again on top (`recheckQueued`), so a write is judged against
//   every write ordered before it whichever node made it; a setting (the rules) in the log
//   takes effect where it is, so writes queued behind it are judged by it.
// The local log could run the replica's algorithm unchanged (it would never see another
// writer's records), but not the other way round: so the writer is written once, for a log
// that may have other writers, and a log with none simply never calls the re-checking half.
// What stays the log's own: the thread a batch is committed on (a dispatch queue for SQLite's
// blocking fsync, off the cooperative pool; the replication task for PostgreSQL), how long
// writes are refused after storage fails, where settings live (a table beside the local log,
// records in the shared one), and snapshots.
//
// Threading: `writer` guards `WriterState` and is never held across a suspension, I/O or a
// subscriber; `published` is taken inside it to publish, and briefly by readers. A write
// takes `writer` once on the caller's thread (check, resolve, serialize its record, queue).
// Only the log's drainer (one thread or task at a time, per `draining`) takes batches, finishes
// them and applies other writers' records, so events are delivered one batch at a time, in log
// order. Completions run on the drainer after the batch's events.

extension Database {
    /// A write waiting for its place in the log.
    struct QueuedWrite {
        enum Work {
            case write(
                Write, pushID: String?, precondition: (@Sendable (DatabaseState) throws -> Void)?, authorize: Authorization?)
            /// An import: the value replaced in one piece in memory, logged as `pieces` (whose
            /// records are made once, before the write is queued).
            case replace(Path, Node, pieces: [ResolvedWrite], records: [LogRecord])
            /// A setting kept in the log itself (a shared log's).
            case setting(name: String, value: String)
        }

        enum Checked {
            /// Accepted: the write with its server values resolved, and its record (made when
            /// it was queued; after a re-check, when the log takes it).
            case write(ResolvedWrite, LogRecord?)
            /// Accepted as queued: an import or a setting, which no check refuses.
            case asQueued
            case refused(any Error)
        }

        let work: Work
        let completion: Completion
        /// Who asked for it, for its events.
        var origin: WriteOrigin = .unknown
        /// The newest check: what to log, or why the write is refused.
        var checked: Checked = .asQueued
        /// The state after this write (the state before it when it is refused).
        var stateAfter = DatabaseState()
        /// The events the newest check found it makes (``DatabaseOptions/eventRecorder``),
        /// committed with its records.
        var events: [OutboxEvent] = []

        var pushID: String? {
            if case .write(_, let pushID, _, _) = work { return pushID }
            return nil
        }

        var isRefused: Bool {
            if case .refused = checked { return true }
            return false
        }
    }

    /// How much was logged since the newest snapshot, and whether one is being taken.
    struct SnapshotCounter {
        var records = 0
        var bytes = 0
        var lastBytes = 0
        var running = false
    }

    struct WriterState {
        /// The log applied up to `position`: what readers see (with the indexes made here).
        var base: DatabaseState
        var position: Int64
        /// The state after every queued write.
        var pending: DatabaseState
        var settings: [String: String]
        var queued: [QueuedWrite] = []
        var inFlight: [QueuedWrite] = []
        /// True from a write queued into an idle writer until the log's drainer found nothing
        /// left to take: the next write then starts the drainer again.
        var draining = false
        /// True from publishing a new base until its events were delivered: a refusal made
        /// meanwhile waits in the queue, so the client hears it after the data that caused it.
        var delivering = false
        /// Indexes made on this node, kept on every new `base`.
        var indexes: [DatabaseState.IndexID] = []
        /// True when an index was made while writes checked without it were queued: finishing
        /// them adds it to the new base.
        var indexesBehind = false
        /// Set while storage is failing: writes are refused until `retryAt` (the clock's ms),
        /// then the next write tries again.
        var failure: (error: HearthError, retryAt: Int64)?
        /// Set by ``Database/close()``: what a write through a reference kept past it is told.
        var closed: HearthError?
        var pushIDs = PushIDGenerator()
        var random: any RandomNumberGenerator
        var snapshots = SnapshotCounter()

        /// Nothing local is ahead of a new write: a refusal may be reported at once.
        var isIdle: Bool { queued.isEmpty && inFlight.isEmpty && !delivering }
    }

    /// What a log read when it opened: the state at its position, the settings, and how much
    /// it replayed after its newest snapshot.
    struct Opened {
        var state: DatabaseState
        var position: Int64
        var settings: [String: String]
        var snapshots = SnapshotCounter()
    }

    /// Records for the log to append after `after`, numbered from `after + 1`; empty when the
    /// batch holds refusals only (they are answered without appending).
    struct Batch {
        let after: Int64
        let records: [LogRecord]
        let bytes: Int
        /// The events the batch's writes make, to commit with their records.
        let events: [OutboxEvent]
    }

    // MARK: - Queueing

    /// Checks a write on top of every write queued before it and queues it, or refuses it at
    /// once when nothing local is ahead of it. One acquisition of `writer`.
    func enqueue(
        origin: WriteOrigin = .unknown, completion: @escaping Completion, _ prepare: (inout WriterState) -> QueuedWrite.Work
    ) {
        enum Next {
            case refuse(any Error)
            case drain
            case wait
        }
        let next = writer.withLock { state -> Next in
            if let refusal = refusal(&state) { return .refuse(refusal) }
            var item = QueuedWrite(work: prepare(&state), completion: completion, origin: origin)
            state.pending = check(&item, on: state.pending, now: options.clock(), record: true)
            if case .refused(let error) = item.checked, state.isIdle { return .refuse(error) }
            state.queued.append(item)
            if state.draining { return .wait }
            state.draining = true
            return .drain
        }
        switch next {
        case .refuse(let error): completion(.failure(error))
        case .drain: log.startDraining(self)
        case .wait: break
        }
    }

    /// The error to refuse a write with (closed, or storage failing), or nil when it may go on.
    private func refusal(_ state: inout WriterState) -> HearthError? {
        if let closed = state.closed { return closed }
        guard let failure = state.failure else { return nil }
        if options.clock() < failure.retryAt { return failure.error }
        state.failure = nil
        return nil
    }

    /// Checks `item` on top of `state` and returns the state after it. The rules judge first:
    /// a condition's answer (and the value it carries) is for writers the rules admit, never
    /// an oracle for anyone else.
    /// - Parameter record: make the accepted write's log record now (on the writer's thread,
    ///   when it is queued) rather than when the log takes it.
    func check(_ item: inout QueuedWrite, on state: DatabaseState, now: Int64, record: Bool) -> DatabaseState {
        var next = state
        item.events = []
        switch item.work {
        case .write(let write, _, let precondition, let authorize):
            do {
                let (after, resolved) = try state.applying(write, now: now)
                try authorize?(state, after, resolved, now)
                try precondition?(state)
                item.checked = .write(resolved, record ? LogRecord(sequence: 0, write: resolved) : nil)
                next = after
                if let recorder = options.eventRecorder {
                    item.events = recorder.events(
                        database: name, write: resolved, origin: item.origin, before: state, after: after, time: now)
                }
            } catch {
                item.checked = .refused(error)
            }
        case .replace(let path, let value, _, _):
            next = state.applying(.set(path, value))
            item.checked = .asQueued
            if let recorder = options.eventRecorder {
                item.events = recorder.events(
                    database: name, write: .set(path, value), origin: item.origin, before: state, after: next, time: now)
            }
        case .setting:
            item.checked = .asQueued
        }
        item.stateAfter = next
        return next
    }

    /// Checks every queued and in-flight write again on top of `base` (after other writers'
    /// records were applied, or a setting changed).
    func recheckQueued(_ state: inout WriterState) {
        let now = options.clock()
        var current = state.base
        for index in state.inFlight.indices {
            current = check(&state.inFlight[index], on: current, now: now, record: false)
        }
        for index in state.queued.indices {
            current = check(&state.queued[index], on: current, now: now, record: false)
        }
        state.pending = current
    }

    // MARK: - Draining (called by the log's drainer only)

    /// Moves queued writes into the batch in flight, within `maxRecords` and `maxBytes`
    /// (checked between writes: one write's records stay together), and returns the records of
    /// the whole batch; nil, with the drainer marked stopped, when nothing is in flight or
    /// queued. Refusals at the head of the queue form a batch of their own, so they are
    /// answered without waiting for the writes behind them to be logged.
    /// - Parameter fromQueue: false to take only the batch already in flight (checked again).
    func takeBatch(fromQueue: Bool = true, maxRecords: Int, maxBytes: Int) -> Batch? {
        writer.withLock { state in
            var records: [LogRecord] = []
            var events: [OutboxEvent] = []
            var bytes = 0
            var sequence = state.position
            func add(_ item: inout QueuedWrite) {
                if !item.isRefused { events += item.events }
                func append(_ record: LogRecord) {
                    var record = record
                    sequence += 1
                    record.sequence = sequence
                    bytes += record.data.count
                    records.append(record)
                }
                switch item.checked {
                case .write(let resolved, let made):
                    let record = made ?? LogRecord(sequence: 0, write: resolved)
                    if made == nil { item.checked = .write(resolved, record) }
                    append(record)
                case .asQueued:
                    switch item.work {
                    case .replace(_, _, _, let pieces): for record in pieces { append(record) }
                    case .setting(let name, let value):
                        append(LogRecord(sequence: 0, kind: LogRecord.settingKind, path: name, data: Array(value.utf8)))
                    case .write: break
                    }
                case .refused:
                    break
                }
            }
            for index in state.inFlight.indices { add(&state.inFlight[index]) }
            if fromQueue {
                let wasEmpty = state.inFlight.isEmpty
                var taken = 0
                while taken < state.queued.count, records.count < maxRecords, bytes < maxBytes {
                    if taken > 0, wasEmpty, records.isEmpty, !state.queued[taken].isRefused { break }
                    add(&state.queued[taken])
                    taken += 1
                }
                if wasEmpty, taken == state.queued.count {
                    swap(&state.inFlight, &state.queued)
                } else if taken > 0 {
                    state.inFlight += state.queued[..<taken]
                    state.queued.removeFirst(taken)
                }
            }
            guard !state.inFlight.isEmpty else {
                state.draining = false
                return nil
            }
            return Batch(after: state.position, records: records, bytes: bytes, events: events)
        }
    }

    /// The batch in flight is in the log ending at `last`: applies it, publishes it, delivers
    /// its events and answers each of its writers, in order.
    /// - Parameter bytes: the size of its records, for the snapshot counters.
    func finishInFlight(last: Int64, bytes: Int) {
        var committed: [Committed] = []
        var changedSettings: [String] = []
        let (finished, first, version) = writer.withLock { state -> ([QueuedWrite], Int64, Published) in
            var sequence = state.position
            var accepted = false
            for item in state.inFlight {
                switch item.checked {
                case .write(let write, _):
                    sequence += 1
                    committed.append(Committed(sequence: sequence, write: write, pushID: item.pushID))
                    accepted = true
                case .asQueued:
                    switch item.work {
                    case .replace(_, _, let pieces, _):
                        for piece in pieces {
                            sequence += 1
                            committed.append(Committed(sequence: sequence, write: piece, pushID: nil))
                        }
                    case .setting(let name, let value):
                        sequence += 1
                        state.settings[name] = value
                        changedSettings.append(name)
                    case .write:
                        break
                    }
                    accepted = true
                case .refused:
                    break
                }
            }
            precondition(sequence == last, "the log answered \(last) for records ending at \(sequence)")
            var base = accepted ? state.inFlight[state.inFlight.count - 1].stateAfter : state.base
            if state.indexesBehind {
                for index in state.indexes where base.index(at: index.path, order: index.order) == nil {
                    base = base.addingIndex(at: index.path, order: index.order)
                }
                if state.queued.isEmpty { state.indexesBehind = false }
            }
            let first = state.position
            state.base = base
            state.position = last
            let finished = state.inFlight
            state.inFlight = []
            state.delivering = true
            let version = Published(state: base, sequence: last)
            published.withLock { $0 = version }
            return (finished, first, version)
        }
        if !committed.isEmpty { events.publish(.committed(committed, version), from: self) }
        let records = committed.count + changedSettings.count
        let snapshotDue = writer.withLock { state -> Bool in
            state.delivering = false
            return records > 0 && Self.countLogged(records: records, bytes: bytes, in: &state, options: options)
        }
        // Settings first: a deploy's caller finds the new rules in force when it resumes.
        publishSettings(changedSettings)
        // Writes queued behind a new setting (the rules) are judged by it.
        if !changedSettings.isEmpty { writer.withLock { recheckQueued(&$0) } }
        var sequence = first
        var next = 0
        for item in finished {
            switch item.checked {
            case .write:
                sequence += 1
                item.completion(.success(committed[next]))
                next += 1
            case .asQueued:
                switch item.work {
                case .replace(_, _, let pieces, _):
                    sequence += Int64(pieces.count)
                    next += pieces.count
                    item.completion(.success(committed[next - 1]))
                case .setting:
                    sequence += 1
                    item.completion(.success(Committed(sequence: sequence, write: .update(.root, []), pushID: nil)))
                case .write:
                    break
                }
            case .refused(let error):
                item.completion(.failure(error))
            }
        }
        if snapshotDue { log.takeSnapshot(of: self) }
    }

    /// The log failed (storage, or the link to it): every write not yet durable is refused,
    /// accepted ones with `failure` and refused ones with their own error, and the writer
    /// falls back to its published version. Nothing after it was logged, so its positions are
    /// used again.
    /// - Parameters:
    ///   - retryAfter: for how long (ms) new writes are refused with `failure` before the next
    ///     one tries the log again; nil to queue new writes at once.
    ///   - closing: refuse every later write with `failure` as well.
    func failWrites(with failure: HearthError, retryAfter: Int64? = nil, closing: Bool = false) {
        let refused = writer.withLock { state -> [QueuedWrite] in
            if let retryAfter { state.failure = (failure, options.clock() + retryAfter) }
            if closing { state.closed = failure }
            let refused = state.inFlight + state.queued
            state.inFlight = []
            state.queued = []
            state.pending = state.base
            state.draining = false
            return refused
        }
        for item in refused {
            if case .refused(let error) = item.checked {
                item.completion(.failure(error))
            } else {
                item.completion(.failure(failure))
            }
        }
    }

    /// Refuses every write from now on with `refusal`; what is queued stays for the log to
    /// finish or refuse.
    func closeWriter(refusing refusal: HearthError) {
        writer.withLock { $0.closed = refusal }
    }

    /// True once ``Database/close()`` was called.
    var isClosed: Bool {
        writer.withLock { $0.closed != nil }
    }

    /// The log position the writer has applied.
    var position: Int64 {
        writer.withLock { $0.position }
    }

    // MARK: - Other writers' records

    /// Applies records other writers appended (in order, right after the writer's position),
    /// then checks the queued writes again on top. A setting (the rules) takes effect where it
    /// is in the log: its subscribers are told before anything after it is applied or checked.
    func applyLogged(_ records: [LogRecord]) throws {
        var segment: [LogRecord] = []
        for record in records {
            segment.append(record)
            if record.kind == LogRecord.settingKind {
                try applySegment(segment)
                segment = []
            }
        }
        if !segment.isEmpty { try applySegment(segment) }
        let due = writer.withLock { state in
            Self.countLogged(records: records.count, bytes: records.reduce(0) { $0 + $1.data.count }, in: &state, options: options)
        }
        if due { log.takeSnapshot(of: self) }
    }

    private func applySegment(_ records: [LogRecord]) throws {
        var writes: [(Int64, ResolvedWrite)] = []
        for record in records where record.kind != LogRecord.settingKind {
            writes.append((record.sequence, try record.write()))
        }
        var committed: [Committed] = []
        var changedSettings: [String] = []
        let version = writer.withLock { state -> Published? in
            guard state.position == records[0].sequence - 1 else { return nil }
            var base = state.base
            var next = writes.makeIterator()
            for record in records {
                if record.kind == LogRecord.settingKind {
                    state.settings[record.path] = String(decoding: record.data, as: UTF8.self)
                    changedSettings.append(record.path)
                } else if let (sequence, write) = next.next() {
                    base = base.applying(write)
                    committed.append(Committed(sequence: sequence, write: write, pushID: nil))
                }
            }
            return install(base, at: records[records.count - 1].sequence, &state)
        }
        guard let version else { return }
        if !committed.isEmpty { events.publish(.committed(committed, version), from: self) }
        writer.withLock { $0.delivering = false }
        publishSettings(changedSettings)
        // The rules may have changed: queued writes are judged by the new ones.
        if !changedSettings.isEmpty { writer.withLock { recheckQueued(&$0) } }
    }

    /// Makes `base`, which other writers' records made, the published version at `position`
    /// and checks the queued writes again on top; its events are delivered next (`delivering`).
    private func install(_ base: DatabaseState, at position: Int64, _ state: inout WriterState) -> Published {
        state.base = base
        state.position = position
        state.delivering = true
        recheckQueued(&state)
        let version = Published(state: base, sequence: position)
        published.withLock { $0 = version }
        return version
    }

    /// The state a log dropped the records before (compacted) and the position it is at.
    struct Snapshot {
        var state: DatabaseState
        var position: Int64
        var settings: [String: String]
        var bytes: Int
    }

    /// Starts over from `snapshot`, newer than the writer's position: subscribers get the
    /// whole tree as one write at the snapshot's position, and queued writes are checked again
    /// on top.
    func resync(to snapshot: Snapshot) {
        let version = writer.withLock { state -> Published? in
            guard snapshot.position > state.position else { return nil }
            var base = snapshot.state
            for index in state.indexes { base = base.addingIndex(at: index.path, order: index.order) }
            state.settings = snapshot.settings
            state.snapshots.records = 0
            state.snapshots.bytes = 0
            state.snapshots.lastBytes = snapshot.bytes
            return install(base, at: snapshot.position, &state)
        }
        guard let version else { return }
        let whole = Committed(sequence: snapshot.position, write: .set(.root, version.state.root), pushID: nil)
        events.publish(.committed([whole], version), from: self)
        writer.withLock { $0.delivering = false }
        publishSettings(Array(snapshot.settings.keys))
        // Queued writes are judged by the rules the snapshot holds.
        writer.withLock { recheckQueued(&$0) }
    }

    /// Tells the subscribers each changed setting once.
    func publishSettings(_ names: [String]) {
        guard !names.isEmpty else { return }
        for name in Set(names) { events.publish(.settingChanged(name), from: self) }
    }

    /// Stores a setting kept beside the log (a local log's) in the writer's copy; the caller
    /// publishes the change.
    func settingStored(named name: String, value: String) {
        writer.withLock { $0.settings[name] = value }
    }

    // MARK: - Snapshot counters

    /// Counts logged records; true when a snapshot is due, which is then marked running.
    private static func countLogged(records: Int, bytes: Int, in state: inout WriterState, options: DatabaseOptions) -> Bool {
        state.snapshots.records += records
        state.snapshots.bytes += bytes
        let due = state.snapshots.records >= options.snapshotAfterWrites
            || state.snapshots.bytes >= max(options.snapshotAfterBytes, state.snapshots.lastBytes)
        guard due, !state.snapshots.running, state.closed == nil else { return false }
        state.snapshots.running = true
        return true
    }

    /// Marks a snapshot running unless one is; true when this call did.
    func beginSnapshot() -> Bool {
        writer.withLock { state in
            guard !state.snapshots.running else { return false }
            state.snapshots.running = true
            return true
        }
    }

    /// A snapshot at `covering` (or none, nil) was stored, of `bytes` bytes (nil: none was
    /// taken here): what was logged after it counts towards the next one.
    func snapshotFinished(covering sequence: Int64?, bytes: Int?) {
        writer.withLock { state in
            state.snapshots.records = sequence.map { Int(max(0, state.position - $0)) } ?? 0
            state.snapshots.bytes = 0
            if let bytes { state.snapshots.lastBytes = bytes }
            state.snapshots.running = false
        }
    }

    /// Marks a snapshot running (a replica's, which the shared log lets one node at a time
    /// store) and returns the records logged since the last one.
    func markSnapshotRunning() -> Int {
        writer.withLock { state in
            state.snapshots.running = true
            return state.snapshots.records
        }
    }

    /// A snapshot could not be stored: the counters stay as they are.
    func snapshotFailed() {
        writer.withLock { $0.snapshots.running = false }
    }

    /// Records logged since the newest snapshot.
    var recordsSinceSnapshot: Int {
        writer.withLock { $0.snapshots.records }
    }

    /// The published version and the settings at its position, read together.
    func publishedWithSettings() -> (Published, [String: String]) {
        writer.withLock { state in (published.withLock { $0 }, state.settings) }
    }
}
