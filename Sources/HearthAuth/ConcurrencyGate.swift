import Synchronization

/// Lets at most ``maxRunning`` pieces of costly work (password hashing) run at once, keeps up
/// to ``maxWaiting`` more waiting in order, and refuses the rest at once.
///
/// Work that must stay quick (a sign-in) is ``Priority/urgent``: it goes ahead of waiting
/// ``Priority/normal`` work (sign-ups, password changes), and when the queue is full it takes
/// the place of the newest normal waiter, which is refused. So a flood of sign-ups costs a
/// sign-in at most the end of the hashes already running, and never piles up unbounded
/// waiting requests.
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

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var urgent: [Waiter] = []
        var normal: [Waiter] = []
        var nextID: UInt64 = 0
        var waiting: Int { urgent.count + normal.count }
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
        self.observer = observer
    }

    /// What is running and waiting now.
    public var occupancy: Occupancy {
        state.withLock { Occupancy(running: $0.running, waiting: $0.waiting) }
    }

    /// Runs `work` when its turn comes; throws ``Refusal`` without running it when it cannot
    /// wait. `work`'s own errors are passed on.
    public func run<T: Sendable>(_ priority: Priority, _ work: () async throws -> T) async throws -> T {
        try await enter(priority)
        defer { leave() }
        return try await work()
    }

    /// Waits for a turn; every successful call must be followed by one ``leave()``.
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
                        } else if state.running < maxRunning, state.waiting == 0 {
                            state.running += 1
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
                        return (outcome, Occupancy(running: state.running, waiting: state.waiting))
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
                    return (removed, Occupancy(running: state.running, waiting: state.waiting))
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

    /// Ends a turn begun by ``enter(_:)``: the next waiter, urgent ones first, runs.
    public func leave() {
        let (next, occupancy) = state.withLock { state -> (Waiter?, Occupancy) in
            let next: Waiter?
            if !state.urgent.isEmpty {
                next = state.urgent.removeFirst()
            } else if !state.normal.isEmpty {
                next = state.normal.removeFirst()
            } else {
                next = nil
                state.running -= 1
            }
            // A waiter that is let in takes over the running place of the one leaving.
            return (next, Occupancy(running: state.running, waiting: state.waiting))
        }
        next?.continuation.resume()
        observer?(occupancy)
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
