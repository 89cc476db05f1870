import HearthOutbox

/// A change of a stored object, as Cloud Storage's triggers see it.
public enum FileChange: Sendable {
    /// New content under a name (a new object, or new content for an existing one).
    case finalized(StoredObject)
    /// An object went away: deleted, or its content replaced (Cloud Storage reports the
    /// replaced generation as deleted).
    case deleted(StoredObject)
    /// An object's metadata changed, its content not.
    case metadataUpdated(StoredObject)
}

/// Decides which events a change of stored objects records (the functions' storage triggers;
/// HearthFunctions implements it). The metadata store asks it inside the transaction that
/// makes the change and commits its events with it, so neither is durable without the other.
/// Called while that transaction is open: it must be quick and must not touch the store.
public protocol FileEventRecorder: Sendable {
    /// The events `changes` make, in order.
    func events(for changes: [FileChange]) -> [OutboxEvent]

    /// A transaction that recorded events committed: they may be delivered now.
    func committed()
}
