/// Where the onDisconnect operations of open realtime connections are kept until they are
/// applied or cancelled: a local SQLite file (``DisconnectQueueStore``), or, in a cluster,
/// PostgreSQL, so another node applies a dead node's operations.
public protocol DisconnectQueue: Sendable {
    /// Keeps `record` until it is removed.
    func add(_ record: DisconnectQueueStore.Record) async throws
    /// Forgets the operations of `session` at `positions` (cancelled ones).
    func remove(session: String, positions: [Int64]) async throws
    /// Forgets every operation of `session` (applied, or the session ended without any).
    func remove(session: String) async throws
    /// Every kept operation, by session and then position.
    func all() async throws -> [DisconnectQueueStore.Record]
    /// The operations an earlier run of this server left (it stopped before they could run),
    /// by session and then position, to apply now. A cluster node claims them (nobody else
    /// applies them after this); a local file keeps them until they are removed.
    func leftovers() async throws -> [DisconnectQueueStore.Record]
    /// The operations of `session` (which just ended) to apply now, `known` being what the
    /// session holds. A cluster removes and returns those still kept (none when another node
    /// took them over); a local file returns `known` and keeps them until they are removed.
    func claim(session: String, known: [DisconnectQueueStore.Record]) async throws -> [DisconnectQueueStore.Record]
}

extension DisconnectQueueStore: DisconnectQueue {
    /// A local file keeps everything it holds until it is removed.
    public func leftovers() async throws -> [Record] {
        try await all()
    }

    /// No other node can take a local session's operations: `known` as it is.
    public func claim(session: String, known: [Record]) async throws -> [Record] {
        known
    }
}
