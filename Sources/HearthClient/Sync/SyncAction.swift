import HearthCore

/// What ``SyncCore`` asks of the code around it after a change: messages to send, events and
/// answers to hand over, the cache to update, timers to arm. The core does no I/O itself, so
/// these are the only way its decisions leave it; they are carried out in the order given.
enum SyncAction: Sendable {
    /// Send one message (JSON text) on the connection, if one is open.
    case send(String)
    /// Events for listeners, in order.
    case deliver([ViewEvent])
    /// The listen of these registrations ended (the rules refused it): they are gone, and
    /// their cancel handlers get `error`.
    case cancel([Int], HearthClientError)
    /// The server's answer to write `id` (a write of ``SyncCore/write(_:_:now:)``).
    case completeWrite(Int64, Result<Void, HearthClientError>)
    /// The answer to an onDisconnect request (``SyncCore/request(_:body:)``).
    case completeRequest(Int, Result<Void, HearthClientError>)
    /// The answer to a read sent to the server (``SyncCore/get(path:query:cacheHasCopy:)``).
    case completeGet(Int64, Result<Node, HearthClientError>)
    /// A read waited too long for the connection: the device's cache answers it (or it fails offline).
    case answerGetFromCache(Int64, ViewKey)
    /// Run transaction `id`'s update on its current input (``SyncCore/transactionInput(_:)``)
    /// and report with ``SyncCore/transactionRan(_:input:output:now:)``.
    case runTransaction(Int)
    /// Transaction `id` finished: committed or aborted with the value after, or failed.
    case completeTransaction(Int, Result<TransactionOutcome, HearthClientError>)
    /// The connection or the pending writes changed (only while the status is observed).
    case status(SyncStatus)
    /// Keep a new write in the device's cache before the write call returns.
    case saveWrite(PendingWrite)
    /// The server answered a write: the cache no longer needs it.
    case removeSavedWrite(Int64)
    /// Save server data received since the last batch, in one transaction.
    case saveCache([LocalCache.CacheUpdate])
    /// Call ``SyncCore/timerFired(_:)`` after `delay`.
    case arm(SyncTimer, after: Duration)
    /// Get the current credential (a fresh one when `forceRefresh`) and give it to
    /// ``SyncCore/authenticate(credential:restoring:)``.
    case authenticate(forceRefresh: Bool, restoring: Bool)
    /// Close the socket (a new one opens later, unless offline by request).
    case closeConnection
}

/// A timer ``SyncCore`` asked for.
enum SyncTimer: Hashable, Sendable {
    /// Save the server data queued for the cache (batched, since the server can send it again).
    case cacheFlush
    /// A read waiting for the connection gives up and asks the cache.
    case getTimeout(Int64)
    /// A transaction waiting for its location's value runs on what it has.
    case transactionStart(Int)
}

/// How a transaction ended: whether its value was written, and the value after.
struct TransactionOutcome: Sendable {
    let committed: Bool
    let value: Node
}
