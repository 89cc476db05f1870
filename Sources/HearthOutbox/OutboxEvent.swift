/// An event recorded in the same commit as the change that caused it, waiting to be delivered
/// to one subscriber (a function). The body is opaque to the outbox: HearthFunctions writes a
/// CloudEvent there.
public struct OutboxEvent: Sendable, Equatable {
    /// Who the event is for: a function's name.
    public var subscriber: String
    /// Its stable ID: the same at every delivery attempt, so a handler can drop repeats.
    public var id: String
    /// The event, encoded by whoever recorded it.
    public var body: [UInt8]
    /// When it was recorded, in milliseconds since the epoch.
    public var time: Int64

    public init(subscriber: String, id: String, body: [UInt8], time: Int64) {
        self.subscriber = subscriber
        self.id = id
        self.body = body
        self.time = time
    }
}

/// An event as an outbox keeps it: its place in the outbox's order and how often its delivery
/// failed so far.
public struct StoredEvent: Sendable, Equatable {
    /// Its place in the outbox: events of one subscriber are delivered in this order, which is
    /// the order their commits were made in.
    public var sequence: Int64
    public var event: OutboxEvent
    /// Failed deliveries so far.
    public var attempts: Int

    public init(sequence: Int64, event: OutboxEvent, attempts: Int) {
        self.sequence = sequence
        self.event = event
        self.attempts = attempts
    }
}

/// An event whose delivery gave up: kept for inspection until it is replayed or discarded.
public struct DeadLetter: Sendable, Equatable {
    /// Its place in the dead-letter list.
    public var sequence: Int64
    public var event: OutboxEvent
    /// Failed deliveries.
    public var attempts: Int
    /// When it was given up on, in milliseconds since the epoch.
    public var failedAt: Int64
    /// The last failure, as the dispatcher described it.
    public var reason: String

    public init(sequence: Int64, event: OutboxEvent, attempts: Int, failedAt: Int64, reason: String) {
        self.sequence = sequence
        self.event = event
        self.attempts = attempts
        self.failedAt = failedAt
        self.reason = reason
    }
}
