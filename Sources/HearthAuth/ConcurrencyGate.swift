import Synchronization

/// Lets at most ``maxRunning`` pieces of costly work (password hashing) run at once, keeps up
/// to ``maxWaiting`` more waiting in order, and refuses the rest at once.
///
/// Work that must stay quick (a sign-in) is ``Priority/urgent``: one running place is kept for
/// it (normal work takes at most `maxRunning - 1`, when `maxRunning` is more than one), it
/// goes ahead of waiting ``Priority/normal`` work (sign-ups, password changes), and when the
/// queue is full it takes the place of the newest normal waiter, which is refused. So a flood
/// of sign-ups neither delays a sign-in behind its hashes nor piles up unbounded waiting
/// requests.
///
/// Waiting is an async suspension, never a blocked thread. A waiter whose task is cancelled
/// leaves the queue.
public final class ConcurrencyGate: Sendable {
    /// Where work waits its turn.
    public enum Priority: Sendable {
        /// Ahead of normal work, and may take a normal waiter's place in a full queue.
        case urgent
        case normal
    }

    /// Why ``enter(_:)`` gave up.
    public enum Refusal: Error, Sendable, Equatable {
        /// The queue was full, or an urgent waiter took this one's place.
        case full
        /// The waiting task was cancelled.
        case cancelled
    }

    /// What is running and waiting, as the gate reports it to its observer after each change.
    public struct Occupancy: Sendable, Equatable {
        public var running: Int
        public var waiting: Int
    }

    public let maxRunning: Int
    public let maxWaiting: Int
    /// How many normal pieces of work may run at once: all but the place kept for urgent work.
    public let maxRunningNormal: Int

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var runningUrgent = 0
        var runningNormal = 0
        var urgent: [Waiter] = []
        var normal: [Waiter] = []
        var nextID: UInt64 = 0
        var running: Int { runningUrgent + runningNormal }
        var waiting: Int { urgent.count + normal.count }
        var occupancy: Occupancy { Occupancy(running: running, waiting: waiting) }
    }

    private let state = Mutex(State())
    private let observer: (@Sendable (Occupancy) -> Void)?

    /// - Parameters:
    ///   - maxRunning: how many may run at once (at least 1).
    ///   - maxWaiting: how many may wait beyond those (0: none wait).
    ///   - observer: told the occupancy after every change (for metrics and tests); called
    ///     outside the gate's lock.
    public init(maxRunning: Int, maxWaiting: Int, observer: (@Sendable (Occupancy) -> Void)? = nil) {
        self.maxRunning = max(1, maxRunning)
        self.maxWaiting = max(0, maxWaiting)
        maxRunningNormal = max(1, self.maxRunning - 1)
        self.observer = observer
    }

    /// What is running and waiting now.
    public var occupancy: Occupancy {
        state.withLock { $0.occupancy }
    }

    /// Runs `work` when its turn comes; throws ``Refusal`` without running it when it cannot
    /// wait. `work`'s own errors are passed on.
    public func run<T: Sendable>(_ priority: Priority, _ work: () async throws -> T) async throws -> T {
        try await enter(priority)
        defer { leave(priority) }
        return try await work()
    }

    /// Waits for a turn; every successful call must be followed by one ``leave(_:)`` with the
    /// same priority.
    public func enter(_ priority: Priority) async throws(Refusal) {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Outcome { case go, wait, refuse(Refusal), displace(Waiter) }
                    let (outcome, occupancy) = state.withLock { state -> (Outcome, Occupancy) in
                        let outcome: Outcome
                        // Checked under the lock: a cancellation after this finds the waiter queued.
                        if Task.isCancelled {
                            outcome = .refuse(.cancelled)
                        } else if isFirst(priority, in: state), canStart(priority, in: state) {
                            start(priority, in: &state)
                            outcome = .go
                        } else if state.waiting < maxWaiting {
                            append(Waiter(id: id, continuation: continuation), priority, to: &state)
                            outcome = .wait
                        } else if priority == .urgent, let displaced = state.normal.popLast() {
                            state.urgent.append(Waiter(id: id, continuation: continuation))
                            outcome = .displace(displaced)
                        } else {
                            outcome = .refuse(.full)
                        }
                        return (outcome, state.occupancy)
                    }
                    switch outcome {
                    case .go: continuation.resume()
                    case .wait: break
                    case .refuse(let refusal): continuation.resume(throwing: refusal)
                    case .displace(let waiter): waiter.continuation.resume(throwing: Refusal.full)
                    }
                    observer?(occupancy)
                }
            } onCancel: {
                let (removed, occupancy) = state.withLock { state -> (Waiter?, Occupancy) in
                    let removed = Self.remove(id, from: &state.urgent) ?? Self.remove(id, from: &state.normal)
                    return (removed, state.occupancy)
                }
                guard let removed else { return }
                removed.continuation.resume(throwing: Refusal.cancelled)
                observer?(occupancy)
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw .cancelled
        }
    }

    /// Ends a turn begun by ``enter(_:)`` with `priority`: the next waiters that may run, urgent
    /// ones first, do.
    public func leave(_ priority: Priority) {
        let (next, occupancy) = state.withLock { state -> ([Waiter], Occupancy) in
            switch priority {
            case .urgent: state.runningUrgent -= 1
            case .normal: state.runningNormal -= 1
            }
            var next: [Waiter] = []
            while true {
                if !state.urgent.isEmpty, canStart(.urgent, in: state) {
                    start(.urgent, in: &state)
                    next.append(state.urgent.removeFirst())
                } else if !state.normal.isEmpty, canStart(.normal, in: state) {
                    start(.normal, in: &state)
                    next.append(state.normal.removeFirst())
                } else {
                    break
                }
            }
            return (next, state.occupancy)
        }
        for waiter in next { waiter.continuation.resume() }
        observer?(occupancy)
    }

    /// True when no one waiting is to go before work of `priority` (urgent work waits only
    /// behind urgent work).
    private func isFirst(_ priority: Priority, in state: State) -> Bool {
        priority == .urgent ? state.urgent.isEmpty : state.waiting == 0
    }

    private func canStart(_ priority: Priority, in state: State) -> Bool {
        state.running < maxRunning && (priority == .urgent || state.runningNormal < maxRunningNormal)
    }

    private func start(_ priority: Priority, in state: inout State) {
        switch priority {
        case .urgent: state.runningUrgent += 1
        case .normal: state.runningNormal += 1
        }
    }

    private func append(_ waiter: Waiter, _ priority: Priority, to state: inout State) {
        switch priority {
        case .urgent: state.urgent.append(waiter)
        case .normal: state.normal.append(waiter)
        }
    }

    private static func remove(_ id: UInt64, from queue: inout [Waiter]) -> Waiter? {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
        return queue.remove(at: index)
    }
}
