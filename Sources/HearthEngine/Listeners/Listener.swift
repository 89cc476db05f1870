import HearthCore
import HearthRules
import NIOCore
import Synchronization

/// How a listener's events are written on its connection.
public enum ListenerFormat: Sendable, Equatable {
    /// Firebase's Server-Sent Events (`event: put`, paths relative to the listener).
    case serverSentEvents
    /// Realtime protocol data pushes (`d`/`m` at absolute paths), with the client's tag for a
    /// query view and its query object as sent (echoed in `c` if the listen is revoked).
    case realtime(tag: Int64?, queryObject: [UInt8]?)
}

/// One listen: where, what query it runs, how its events are written and the queue they go to.
/// A Server-Sent Events stream has a queue of its own; a realtime connection's listens share
/// the connection's queue, so events and responses leave in the order they were queued.
public final class Listener: Sendable {
    let database: String
    /// The listened location; events carry paths relative to it (SSE) or absolute (realtime).
    public let path: Path
    /// The query the listen runs; nil for the whole location.
    public let query: Query?
    /// How this listener's events are encoded.
    public let format: ListenerFormat
    /// Where this listener's events are queued for its connection.
    public let buffer: EventBuffer
    /// Writes up to this sequence number are already in the stream's initial data.
    public let startSequence: Int64
    /// The last query result sent, to send only real changes (query listeners only).
    public let lastResult: Mutex<Node>
    /// When the stream's credential expires (milliseconds), after which it gets `auth_revoked`.
    public let expires: Int64?
    /// The `auth` the rules judge this listen by; nil for an admin, whom rules do not bind. A
    /// realtime connection that signs in or out changes it (through the hub).
    var auth: Node? { authState.withLock { $0 } }
    let authState: Mutex<Node?>
    /// True while the rule that grants the read looks at data, so writes must recheck it.
    let grantDependsOnData = Atomic<Bool>(false)
    /// True once the hub has ended this listen by itself (rules, size): it is out of the registry.
    let revoked = Atomic<Bool>(false)

    init(
        database: String, path: Path, query: Query?, startSequence: Int64, initial: Node,
        expires: Int64? = nil, auth: Node? = nil, format: ListenerFormat = .serverSentEvents,
        buffer: EventBuffer = EventBuffer()
    ) {
        self.expires = expires
        self.database = database
        self.path = path
        self.query = query
        self.startSequence = startSequence
        self.lastResult = Mutex(initial)
        self.authState = Mutex(auth)
        self.format = format
        self.buffer = buffer
    }

    /// Whether the rules still let this stream read its location in `state`.
    func readGrant(under rules: SecurityRules, in state: DatabaseState, now: Int64) -> SecurityRules.ReadGrant? {
        guard let auth else { return SecurityRules.ReadGrant(location: .root, dependsOnData: false) }
        return rules.read(path, by: .init(auth: auth, now: now), root: state.root, query: RuleQuery(query))
    }
}
