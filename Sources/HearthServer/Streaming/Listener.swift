import HearthCore
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

    init(database: String, path: Path, query: Query?, startSequence: Int64, initial: Node, expires: Int64? = nil) {
        self.expires = expires
        self.database = database
        self.path = path
        self.query = query
        self.startSequence = startSequence
        self.lastResult = Mutex(initial)
    }
}
