import HearthOutbox

/// The ordered write log that the nodes of a cluster share (HearthCluster keeps it in
/// PostgreSQL). A ``Database`` opened with ``Database/replica(name:log:options:events:logger:)`` appends
/// its writes here (through its `ReplicaLog`) and applies everything here, in order, so every
/// node holds the same data.
///
/// Records carry their sequence: 1, 2, 3… per database with no gaps. Records below the newest
/// snapshot may be dropped (compaction); a node that needs them starts again from the snapshot.
///
/// The events the records' writes make (``DatabaseOptions/eventRecorder``) are appended with
/// them, in the same transaction, to the database's outbox in the shared store
/// (``outbox(database:)``): an event exists exactly when its record does, whichever node
/// appended it.
public protocol SharedLog: Sendable {
    /// Appends `records` (their sequences are ignored) and the `events` they make right after
    /// `position`, atomically.
    /// - Returns: the sequence of the last record written, or ``SharedLogAppend/behind(latest:)``
    ///   and nothing written when the log is already past `position`.
    func append(database: String, after position: Int64, records: [LogRecord], events: [OutboxEvent]) async throws -> SharedLogAppend

    /// Appends while holding the log's head, so nobody else appends meanwhile: passes the
    /// records after `position` (those the node missed, at most `missedAtMost`, in order and
    /// with no gap) to `prepare`, which applies them and returns the records to append and the
    /// events they make (checked again on top of the missed ones), then appends those, atomically.
    /// - Returns: the sequence of the last record (the head when `prepare` returned none), or
    ///   nil, with nothing done, when more than `missedAtMost` were missed or they have a gap
    ///   (compacted): the node catches up first.
    func appendHoldingHead(
        database: String, after position: Int64, missedAtMost: Int,
        prepare: @escaping @Sendable (_ missed: [LogRecord]) async throws -> (records: [LogRecord], events: [OutboxEvent])
    ) async throws -> Int64?

    /// Where the events appended with `database`'s records wait for delivery.
    func outbox(database: String) -> any EventOutbox

    /// Up to `limit` records after `position`, in order. The first one's sequence is above
    /// `position + 1` when compaction dropped the ones between.
    func records(database: String, after position: Int64, limit: Int) async throws -> [LogRecord]

    /// The newest snapshot of `database`, if one was stored.
    func newestSnapshot(database: String) async throws -> SharedSnapshot?

    /// Stores the snapshot `make` takes and compacts the log behind the snapshot before it.
    /// `make` runs only while no other node is storing one, with the sequence of the newest
    /// stored snapshot (0 for none); it returns nil to decline (one was stored just now), and
    /// what it returns is stored only if it is newer.
    /// - Returns: true when it was stored.
    func storeSnapshot(
        database: String, make: @escaping @Sendable (_ newest: Int64) async throws -> SharedSnapshot?
    ) async throws -> Bool
}

/// What ``SharedLog/append(database:after:records:)`` did.
public enum SharedLogAppend: Sendable, Equatable {
    /// Written, ending at this sequence.
    case appended(last: Int64)
    /// Nothing written: the log has records after the given position, up to `latest`.
    case behind(latest: Int64)
}

/// A database's whole state at one log position.
public struct SharedSnapshot: Sendable {
    /// The last log record the snapshot includes.
    public var sequence: Int64
    /// The tree as export JSON, in pieces of a few megabytes.
    public var chunks: [[UInt8]]
    /// The database's settings (its rules document) at that position.
    public var settings: [String: String]

    /// A snapshot as stored at `sequence`.
    public init(sequence: Int64, chunks: [[UInt8]], settings: [String: String]) {
        self.sequence = sequence
        self.chunks = chunks
        self.settings = settings
    }
}
