/// How a function's events are retried and how many it takes at once.
public struct DeliveryPolicy: Sendable, Equatable {
    /// Failed deliveries after which an event goes to the dead-letter list (1: no retry).
    public var maxAttempts: Int
    /// The wait after the first failure; it doubles after each, up to ``maxBackoff``.
    public var minBackoff: Duration
    public var maxBackoff: Duration
    /// How long one delivery may take before it counts as failed.
    public var timeout: Duration
    /// How many events are handed over at once. 1 (the default) keeps commit order strictly:
    /// an event is delivered only after every earlier one was delivered or given up on. More
    /// hands over that many consecutive events together, so they may finish in any order.
    public var maxConcurrency: Int
    /// Dead letters kept for the function in each outbox: past it the oldest are dropped (and
    /// logged), so a function that fails every event cannot fill the disk with copies of them.
    public var maxDeadLetters: Int

    public init(
        maxAttempts: Int = 8, minBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(60),
        timeout: Duration = .seconds(60), maxConcurrency: Int = 1, maxDeadLetters: Int = 1000
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.minBackoff = minBackoff
        self.maxBackoff = max(minBackoff, maxBackoff)
        self.timeout = timeout
        self.maxConcurrency = max(1, maxConcurrency)
        self.maxDeadLetters = max(1, maxDeadLetters)
    }

    /// The wait after `failures` failed deliveries (`failures` ≥ 1).
    public func backoff(after failures: Int) -> Duration {
        var wait = minBackoff
        for _ in 1..<max(1, failures) {
            wait = wait * 2
            if wait >= maxBackoff { return maxBackoff }
        }
        return min(wait, maxBackoff)
    }
}
