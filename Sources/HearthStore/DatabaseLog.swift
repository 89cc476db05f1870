import HearthOutbox

/// The durable log behind a ``Database``'s one writer: where checked writes are made durable,
/// in which order, and where settings and snapshots are kept.
///
/// Two implementations, one per mode: ``LocalLog`` (one node: SQLite files in the database's
/// folder) and ``ReplicaLog`` (a cluster node: the ``SharedLog`` every node appends to and
/// follows). The writer (`Database+Writer.swift`) is the same for both: it checks writes in
/// arrival order, queues them, and hands the log batches; the log decides on which thread it
/// drains them and how a batch becomes durable, and tells the writer what came of it:
///
/// - ``Database/takeBatch(fromQueue:maxRecords:maxBytes:)`` moves queued writes into the
///   batch in flight and returns their records, numbered after the writer's position;
/// - ``Database/finishInFlight(last:bytes:)`` reports the batch durable up to `last`, which
///   publishes it and answers its writers;
/// - ``Database/failWrites(with:retryAfter:closing:)`` refuses every write not yet durable;
/// - ``Database/applyLogged(_:)`` and ``Database/resync(to:)`` are for a log that other
///   writers append to as well: it hands the writer their records (or, when it dropped them,
///   a snapshot), and the writer applies them and checks its own queued writes again on top.
///   A local log never calls them.
///
/// The log is held by its database and is given the database on every call, so neither keeps
/// the other alive past ``Database/close()``.
protocol DatabaseLog: Sendable {
    /// Where the events the writes record wait for delivery; nil for a log that keeps none.
    var outbox: (any EventOutbox)? { get }

    /// Writes were queued into an idle writer: take batches and report each until
    /// ``Database/takeBatch(fromQueue:maxRecords:maxBytes:)`` returns nil (on the log's own
    /// thread; this call must not block).
    func startDraining(_ database: Database)

    /// Stores a setting durably and makes it the database's, telling its subscribers; returns
    /// once it is in force on this node.
    func storeSetting(named name: String, to value: String, in database: Database) async throws

    /// The writer's counters say a snapshot is due (and marked one running): take it in the
    /// background, and report with ``Database/snapshotFinished(covering:bytes:)``.
    func takeSnapshot(of database: Database)

    /// Takes a snapshot now and waits for it, if the log keeps its own (see `Database.snapshot()`).
    func snapshotNow(of database: Database)

    /// Offers the cluster a snapshot (see ``Database/storeSharedSnapshot(force:)``); false for
    /// a log no other node shares.
    func storeSharedSnapshot(of database: Database, force: Bool) async throws -> Bool

    /// Runs the log's own background work until the database closes: following the shared
    /// log for a replica; nothing for a local log.
    func run(_ database: Database) async

    /// Asks the log to look for records other writers appended (nothing for a local log).
    func wake()

    /// The last position of a shared log the database applied; nil for a local log.
    func appliedPosition(of database: Database) -> Int64?

    /// Stops taking writes, finishes or refuses what is queued, and (local) writes a final
    /// snapshot when the log grew since the last one.
    func close(_ database: Database)

    /// Waits until the work the log started on its own threads so far is done (for tests and
    /// tools; a replica's is asynchronous and not waited for).
    func settle()
}
