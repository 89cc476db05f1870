import Synchronization

/// How many events wait for each function in each outbox, so that recording can stop at a
/// bound before the disk fills: the recorder counts what it records, delivery counts what
/// leaves, and each lane sets the figure from the outbox when it starts (what earlier runs
/// left counts against the bound), whenever it finds its queue empty, and at least every
/// minute while events wait (``DeliveryLane/recountInterval``).
///
/// Those recounts are what correct the figure: a commit that failed after its events were
/// counted leaves it too high, a dead letter put back leaves it too low, until the next one.
/// (Counting in the store's commit path instead would mean hooks into every store's failure
/// paths; a figure right within a minute is all a bound on disk use needs.) A recount misses
/// the events of writes committing while it reads, so it may admit that many past the bound.
///
/// Threading: one lock, taken briefly; the recorder reads it under the database writer's lock.
public final class EventBacklog: Sendable {
    /// Where a function's events wait.
    public struct Queue: Hashable, Sendable {
        public var source: String
        public var function: String

        public init(source: String, function: String) {
            self.source = source
            self.function = function
        }
    }

    /// The most events that may wait for one function in one outbox; events past it are not
    /// recorded, and counted as dropped.
    public let limit: Int
    /// Past this many waiting events a warning is logged (once each time it is crossed).
    public var warningAt: Int { limit - limit / 5 }

    private struct State {
        var waiting: [Queue: Int] = [:]
        var dropped: [Queue: Int] = [:]
        var warned: Set<Queue> = []
    }

    private let state = Mutex(State())
    private let warn: @Sendable (Queue, Int) -> Void

    /// - Parameter warn: told when a queue crosses ``warningAt``, with its size (outside the lock).
    public init(limit: Int, warn: @escaping @Sendable (Queue, Int) -> Void = { _, _ in }) {
        self.limit = max(1, limit)
        self.warn = warn
    }

    /// Counts an event about to be recorded for `queue`; false (and counted as dropped) when
    /// the queue is full.
    func admit(_ queue: Queue) -> Bool {
        let (admitted, crossed) = state.withLock { Self.admit(queue, limit: limit, warningAt: warningAt, in: &$0) }
        if let crossed { warn(queue, crossed) }
        return admitted
    }

    /// ``admit(_:)`` for one event's functions at once, under one lock: the queues that
    /// admitted it, in order.
    func admit(_ queues: [Queue]) -> [Queue] {
        if queues.count == 1 { return admit(queues[0]) ? queues : [] }
        let (admitted, crossed) = state.withLock { state -> ([Queue], [(Queue, Int)]) in
            var admitted: [Queue] = []
            var crossed: [(Queue, Int)] = []
            admitted.reserveCapacity(queues.count)
            for queue in queues {
                let (taken, size) = Self.admit(queue, limit: limit, warningAt: warningAt, in: &state)
                if taken { admitted.append(queue) }
                if let size { crossed.append((queue, size)) }
            }
            return (admitted, crossed)
        }
        for (queue, size) in crossed { warn(queue, size) }
        return admitted
    }

    /// One event for `queue`, under the lock: whether it is admitted, and the queue's size when
    /// this crossed the warning mark.
    private static func admit(_ queue: Queue, limit: Int, warningAt: Int, in state: inout State) -> (Bool, Int?) {
        let waiting = state.waiting[queue, default: 0]
        guard waiting < limit else {
            state.dropped[queue, default: 0] += 1
            return (false, nil)
        }
        state.waiting[queue] = waiting + 1
        if waiting + 1 >= warningAt, state.warned.insert(queue).inserted { return (true, waiting + 1) }
        return (true, nil)
    }

    /// `count` events of `queue` left it (delivered or dead-lettered).
    func left(_ queue: Queue, count: Int) {
        state.withLock { state in
            let waiting = max(0, state.waiting[queue, default: 0] - count)
            state.waiting[queue] = waiting
            if waiting < warningAt { state.warned.remove(queue) }
        }
    }

    /// The outbox says exactly this many wait.
    func set(_ queue: Queue, waiting: Int) {
        state.withLock { state in
            state.waiting[queue] = waiting
            if waiting < warningAt { state.warned.remove(queue) }
        }
    }

    /// Events waiting, by queue.
    public var waiting: [Queue: Int] { state.withLock { $0.waiting } }

    /// Events not recorded because their queue was full, by queue.
    public var dropped: [Queue: Int] { state.withLock { $0.dropped } }
}
