import HearthOutbox
import Logging
import Synchronization

/// Delivers one function's events from one outbox: in the order they were committed, each at
/// least once, failures retried with backoff and then moved to the dead-letter list.
///
/// The lane reads its queue in pages after a cursor kept in memory, hands each event to the
/// function's ``EventInvoker`` as a structured CloudEvent (``EventEnvelope``; one that cannot
/// be read goes to the dead-letter list at once), and removes delivered events from the
/// outbox in batches (one transaction for many; an event delivered but not yet removed when
/// the process dies is delivered again, which the event's stable ID lets a function notice). An event that fails
/// holds back those behind it until it is delivered or given up on; an unreachable function
/// holds its whole queue, on disk, until it is back. Dead letters record every failed attempt,
/// and at most ``DeliveryPolicy/maxDeadLetters`` are kept (the oldest go, with a warning).
///
/// Threading: `run()` is one task; the lane's state is that task's, but for when the backlog
/// was last recounted, behind a lock (a concurrent window's retries recount too). ``wake()``
/// may be called from anywhere (a commit's subscriber) and never blocks.
public final class DeliveryLane: Sendable {
    /// What one delivery attempt came to, for metrics and the console.
    public struct Attempt: Sendable {
        public var source: String
        public var function: String
        public var eventID: String
        /// 1 for the first try.
        public var attempt: Int
        public var result: DeliveryResult
        public var duration: Duration
        /// From the event's commit to this attempt's start, in milliseconds.
        public var lag: Int64
        /// True when this failure sent the event to the dead-letter list.
        public var deadLettered: Bool
    }

    /// How a lane tells time, waits and reports; injected so tests need not wait.
    public struct Environment: Sendable {
        /// Milliseconds since the epoch.
        public var now: @Sendable () -> Int64
        /// Waits (throws when cancelled).
        public var sleep: @Sendable (Duration) async throws -> Void
        /// Told of every attempt.
        public var observe: @Sendable (Attempt) -> Void
        public var logger: Logger

        public init(
            now: @escaping @Sendable () -> Int64, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
            observe: @escaping @Sendable (Attempt) -> Void = { _ in }, logger: Logger
        ) {
            self.now = now
            self.sleep = sleep
            self.observe = observe
            self.logger = logger
        }
    }

    public let outbox: any EventOutbox
    public let function: String
    let invoker: any EventInvoker
    let policy: DeliveryPolicy
    let backlog: EventBacklog
    let envelope: EventEnvelope
    let environment: Environment
    /// The wake-ups of the current run: a stream per ``run()``, since a run cancelled while
    /// waiting ends its stream (a cluster node's lanes stop and start again with its lease).
    private let wakeup = Mutex<AsyncStream<Void>.Continuation?>(nil)
    /// When the backlog's figure for this queue was last set from the outbox (milliseconds
    /// since the epoch); nil before the first time.
    private let lastCount = Mutex<Int64?>(nil)
    /// Events read from the outbox at once.
    static let pageSize = 64
    /// How often, at most, the backlog's figure is set from the outbox while events wait
    /// (besides at start and whenever the queue is empty): it corrects the counts of commits
    /// that failed after their events were counted, and of dead letters put back.
    static let recountInterval: Int64 = 60_000

    public init(
        outbox: any EventOutbox, function: String, invoker: any EventInvoker, policy: DeliveryPolicy, backlog: EventBacklog,
        envelope: EventEnvelope, environment: Environment
    ) {
        self.outbox = outbox
        self.function = function
        self.invoker = invoker
        self.policy = policy
        self.backlog = backlog
        self.envelope = envelope
        self.environment = environment
    }

    var queue: EventBacklog.Queue { EventBacklog.Queue(source: outbox.source, function: function) }

    /// New events may be waiting: look again (at once if the lane is idle).
    public func wake() {
        _ = wakeup.withLock { $0?.yield() }
    }

    /// Delivers until cancelled. Storage errors are logged and retried after a pause.
    public func run() async {
        var cursor: Int64 = 0
        var delivered: [Int64] = []
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        wakeup.withLock { $0 = continuation }
        defer { wakeup.withLock { $0 = nil } }
        var wakeups = stream.makeAsyncIterator()
        while !Task.isCancelled {
            do {
                // Due at once when the lane starts: what earlier runs left waits against the
                // bound too.
                try await recountIfDue(unremoved: delivered.count)
                let page = try await outbox.pending(for: function, after: cursor, limit: Self.pageSize)
                if page.isEmpty {
                    try await flush(&delivered)
                    try await recount(unremoved: 0)
                    // Events committed between the read and now woke the stream already.
                    guard await wakeups.next() != nil else { return }
                    continue
                }
                var index = 0
                while index < page.count {
                    let window = page[index..<min(page.count, index + policy.maxConcurrency)]
                    let outcomes = await deliver(Array(window), unremoved: delivered.count)
                    for (event, outcome) in zip(window, outcomes) {
                        switch outcome {
                        case .delivered:
                            delivered.append(event.sequence)
                        case .deadLettered(let reason, let attempts):
                            try await deadLetter(event, attempts: attempts, reason: reason)
                        case .cancelled:
                            await flushWhileStopping(delivered)
                            return
                        }
                        cursor = event.sequence
                    }
                    index += window.count
                    if delivered.count >= Self.pageSize { try await flush(&delivered) }
                }
            } catch {
                if Task.isCancelled { break }
                environment.logger.error("function event delivery could not use its outbox; trying again", metadata: [
                    "function": "\(function)", "source": "\(outbox.source)", "error": "\(error)",
                ])
                try? await environment.sleep(policy.minBackoff)
            }
        }
        await flushWhileStopping(delivered)
    }

    private enum Outcome {
        case delivered
        case deadLettered(reason: String, attempts: Int)
        case cancelled
    }

    private func flush(_ delivered: inout [Int64]) async throws {
        guard !delivered.isEmpty else { return }
        try await outbox.remove(delivered, for: function)
        backlog.left(queue, count: delivered.count)
        delivered.removeAll(keepingCapacity: true)
    }

    /// Removes delivered events as the lane stops, in a task of its own: the lane's task is
    /// cancelled then, and the outbox's writes do not start in a cancelled task (an unstructured
    /// task does not inherit cancellation).
    private func flushWhileStopping(_ delivered: [Int64]) async {
        guard !delivered.isEmpty else { return }
        let (outbox, backlog, queue, function) = (outbox, backlog, queue, function)
        await Task {
            guard (try? await outbox.remove(delivered, for: function)) != nil else { return }
            backlog.left(queue, count: delivered.count)
        }.value
    }

    private func deadLetter(_ event: StoredEvent, attempts: Int, reason: String) async throws {
        let dropped = try await outbox.deadLetter(
            event.sequence, for: function, attempts: attempts, reason: reason, at: environment.now(), keeping: policy.maxDeadLetters)
        backlog.left(queue, count: 1)
        if dropped > 0 {
            environment.logger.warning("a function's dead-letter list is full: its oldest letters were dropped", metadata: [
                "function": "\(function)", "source": "\(outbox.source)", "dropped": "\(dropped)", "bound": "\(policy.maxDeadLetters)",
            ])
        }
    }

    /// Sets the backlog's figure for this queue from the outbox when it was not set for
    /// ``recountInterval``, or never (see ``EventBacklog``).
    /// - Parameter unremoved: events delivered but still in the outbox (the outbox counts
    ///   them; the backlog already let them go when they are removed).
    private func recountIfDue(unremoved: Int) async throws {
        let now = environment.now()
        let due = lastCount.withLock { last in
            guard last.map({ now - $0 >= Self.recountInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        do {
            try await recount(unremoved: unremoved)
        } catch {
            lastCount.withLock { $0 = nil }
            throw error
        }
    }

    private func recount(unremoved: Int) async throws {
        backlog.set(queue, waiting: max(0, try await outbox.waiting(for: function) - unremoved))
        let now = environment.now()
        lastCount.withLock { $0 = now }
    }

    /// Delivers a window of consecutive events together, each retried on its own.
    private func deliver(_ window: [StoredEvent], unremoved: Int) async -> [Outcome] {
        if window.count == 1 { return [await deliverWithRetries(window[0], unremoved: unremoved)] }
        return await withTaskGroup(of: (Int, Outcome).self) { group in
            for (offset, event) in window.enumerated() {
                group.addTask { (offset, await self.deliverWithRetries(event, unremoved: unremoved)) }
            }
            var outcomes = [Outcome](repeating: .cancelled, count: window.count)
            for await (offset, outcome) in group { outcomes[offset] = outcome }
            return outcomes
        }
    }

    private func deliverWithRetries(_ kept: StoredEvent, unremoved: Int) async -> Outcome {
        let stored: StoredEvent
        do {
            stored = try envelope.delivering(kept)
        } catch {
            // Retrying cannot make it readable.
            environment.logger.error("a function's event could not be read: it is in the dead-letter list", metadata: [
                "function": "\(function)", "event": "\(kept.event.id)", "error": "\(error)",
            ])
            return .deadLettered(reason: "\(error)", attempts: kept.attempts + 1)
        }
        var failures = stored.attempts
        var unreachableFor = 0
        var attempt = stored.attempts
        while !Task.isCancelled {
            attempt += 1
            let started = ContinuousClock.now
            let lag = environment.now() - stored.event.time
            let result = await invoker.deliver(stored, timeout: policy.timeout)
            let duration = ContinuousClock.now - started
            let report = { [attempt] (deadLettered: Bool) in
                self.environment.observe(Attempt(
                    source: self.outbox.source, function: self.function, eventID: stored.event.id, attempt: attempt, result: result,
                    duration: duration, lag: lag, deadLettered: deadLettered))
            }
            // A failure that ends with the lane's task (the call was cut short by the stop)
            // says nothing of the function: it is tried again at the next start, uncounted.
            if Task.isCancelled, result != .delivered { return .cancelled }
            let wait: Duration
            switch result {
            case .delivered:
                report(false)
                return .delivered
            case .failed(let reason):
                failures += 1
                unreachableFor = 0
                let givingUp = failures >= policy.maxAttempts
                report(givingUp)
                if givingUp {
                    environment.logger.warning("function gave up on an event: it is in the dead-letter list", metadata: [
                        "function": "\(function)", "event": "\(stored.event.id)", "attempts": "\(failures)", "reason": "\(reason)",
                    ])
                    return .deadLettered(reason: reason, attempts: failures)
                }
                try? await outbox.recordFailure(of: stored.sequence, for: function)
                wait = policy.backoff(after: failures)
            case .unreachable:
                unreachableFor += 1
                report(false)
                wait = Self.unreachableBackoff.backoff(after: unreachableFor)
            }
            // A lane held by one event still corrects its backlog's figure now and then.
            try? await recountIfDue(unremoved: unremoved)
            do { try await environment.sleep(wait) } catch { return .cancelled }
        }
        return .cancelled
    }

    /// The waits between attempts at an unreachable function: soon, and never long, so a
    /// process restarting or an endpoint back up gets its events within seconds (they use up
    /// no retries).
    static let unreachableBackoff = DeliveryPolicy(minBackoff: .milliseconds(100), maxBackoff: .seconds(5))
}
