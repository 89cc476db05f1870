import Foundation

/// How a ``Database`` behaves: when it snapshots, and where its time and randomness come from.
public struct DatabaseOptions: Sendable {
    /// Take a snapshot once this many writes were logged since the last one.
    public var snapshotAfterWrites: Int
    /// Take a snapshot once this many bytes were logged since the last one, or as many bytes
    /// as the last snapshot took if that is more: snapshot work then stays proportional to
    /// the log's growth, however large the tree.
    public var snapshotAfterBytes: Int
    /// How far back, in milliseconds, a database stays restorable to any moment (its log and
    /// enough snapshots are kept that long); 0 keeps no history beyond the newest snapshot.
    public var history: Int64 = 0
    /// After storage failed (a full disk, an I/O error), how long writes are refused before
    /// the next one tries the disk again, in milliseconds.
    public var storageRetryInterval: Int64 = 1000
    /// The server clock, in milliseconds since the epoch (server values, push IDs).
    public var clock: @Sendable () -> Int64
    /// The source of randomness for push IDs.
    public var makeRandom: @Sendable () -> any RandomNumberGenerator
    /// Told of every durable commit: the database, how many records it wrote, and how long the
    /// commit took (SQLite's, or the cluster's append). For the server's metrics.
    public var onCommit: (@Sendable (_ database: String, _ records: Int, _ duration: Duration) -> Void)?
    /// Decides which events each write records in its commit (the functions' triggers); nil
    /// records none. A local database keeps them in its log file (``Database/outbox``).
    public var eventRecorder: (any CommitEventRecorder)?

    /// Defaults: snapshot every 200,000 writes or 16 MB of log (or the last snapshot's size),
    /// the system clock and randomness.
    public init(
        snapshotAfterWrites: Int = 200_000,
        snapshotAfterBytes: Int = 16 << 20,
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        makeRandom: @escaping @Sendable () -> any RandomNumberGenerator = { SystemRandomNumberGenerator() }
    ) {
        self.snapshotAfterWrites = snapshotAfterWrites
        self.snapshotAfterBytes = snapshotAfterBytes
        self.clock = clock
        self.makeRandom = makeRandom
    }
}
