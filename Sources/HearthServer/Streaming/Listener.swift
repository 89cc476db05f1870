import HearthCore
import HearthRules
import Synchronization

/// One open stream: where it listens, what query it runs, and its queue of events.
final class Listener: Sendable {
    let database: String
    let path: Path
    let query: Query?
    let buffer = EventBuffer()
    /// Writes up to this sequence number are already in the stream's initial data.
    let startSequence: Int64
    /// The last query result sent, to send only real changes (query listeners only).
    let lastResult: Mutex<Node>
    /// When the stream's credential expires (milliseconds), after which it gets `auth_revoked`.
    let expires: Int64?
    /// The `auth` the rules judge this stream by; nil for an admin, whom rules do not bind.
    let auth: Node?
    /// True while the rule that grants the read looks at data, so writes must recheck it.
    let grantDependsOnData = Atomic<Bool>(false)

    init(
        database: String, path: Path, query: Query?, startSequence: Int64, initial: Node,
        expires: Int64? = nil, auth: Node? = nil
    ) {
        self.expires = expires
        self.database = database
        self.path = path
        self.query = query
        self.startSequence = startSequence
        self.lastResult = Mutex(initial)
        self.auth = auth
    }

    /// Whether the rules still let this stream read its location in `state`.
    func readGrant(under rules: SecurityRules, in state: DatabaseState, now: Int64) -> SecurityRules.ReadGrant? {
        guard let auth else { return SecurityRules.ReadGrant(location: .root, dependsOnData: false) }
        return rules.read(path, by: .init(auth: auth, now: now), root: state.root, query: RuleQuery(query))
    }
}
