import HearthCore
import HearthOutbox

/// Decides which events a write records in its commit: the functions' triggers (HearthFunctions
/// implements it). A database given one in ``DatabaseOptions/eventRecorder`` asks it about every
/// write it accepts and commits the events in the same transaction as the write's record, so a
/// write is never durable without its events, nor an event without its write.
///
/// Called on the writer's thread while it holds the writer's lock (the state a write is
/// checked on must not move meanwhile): it must be quick and pure, and must not call back into
/// the database. A write checked again (in a cluster, after another node's records came
/// first) is asked about again and its earlier answer dropped.
public protocol CommitEventRecorder: Sendable {
    /// The events `write`, made by `origin`, makes in `database`, the tree going from `before`
    /// to `after`, at `time` (the server clock, in milliseconds since the epoch).
    func events(
        database: String, write: ResolvedWrite, origin: WriteOrigin, before: DatabaseState, after: DatabaseState, time: Int64
    ) -> [OutboxEvent]
}
