/// What one realtime connection may hold at once (``ServerConfiguration/realtimeLimits``).
public struct RealtimeLimits: Sendable {
    /// Listens open at once; one more is refused.
    public var maxListens = 10_000
    /// Writes sent and not yet durable; the session reads no further until one finishes.
    public var maxOutstandingWrites = 1_000
    /// onDisconnect operations kept at once; one more is refused.
    public var maxOnDisconnectOperations = 1_000
    /// Bytes of onDisconnect data kept at once (16 MiB); more is refused.
    public var maxOnDisconnectBytes = 16 << 20
    /// The largest answer (a listen's data, a get): Firebase's 256 MB.
    public var maxResponseBytes = 256 << 20
    /// Events waiting for a slow reader before it is disconnected (it reconnects and resyncs).
    public var maxQueuedEvents = 10_000
    /// Bytes of events waiting for a slow reader (64 MiB) before it is disconnected.
    public var maxQueuedBytes = 64 << 20
    /// The longest message: a 16 MB write and its envelope.
    public var maxMessageBytes = (16 << 20) + 4096
    /// Long-polling sessions open at once from one client address (judged as ``ProxyTrust``
    /// names the client); past it a new one is refused.
    public var maxLongPollSessionsPerAddress = 64

    /// Firebase-like defaults; set the properties to change them.
    public init() {}
}
