import HearthOutbox

/// What came of handing a function one event.
public enum DeliveryResult: Sendable, Equatable {
    /// The function took it.
    case delivered
    /// The function answered with a failure, or did not answer in time: counted towards the
    /// retry limit.
    case failed(String)
    /// The function could not be reached (its process is down, its endpoint refuses
    /// connections): the event waits, however long, without using up its retries.
    case unreachable(String)
}

/// Hands events to a function, wherever it runs (a functions-framework process, a webhook, a
/// Swift closure in this process).
public protocol EventInvoker: Sendable {
    /// Delivers `event` (a structured CloudEvent in ``OutboxEvent/body``) and says what came of
    /// it, within `timeout`.
    func deliver(_ event: StoredEvent, timeout: Duration) async -> DeliveryResult
}
