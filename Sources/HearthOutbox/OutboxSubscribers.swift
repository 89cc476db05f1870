import GRDB
import Synchronization

/// The subscribers whose cursors one outbox file is known to hold, kept by the store that
/// records into it, so recording does not look each one up again at every write. A name is
/// added once the transaction that made its cursor committed (a rolled-back one made nothing).
/// Cursors are only ever removed for subscribers the server no longer has
/// (``SQLiteOutbox/retain(subscribers:)``), which record nothing afterwards.
public final class OutboxSubscribers: Sendable {
    private let known = Mutex<Set<String>>([])

    public init() {}

    /// The subscribers of `events` whose cursors are not known to exist.
    func unknown(in events: [OutboxEvent]) -> Set<String> {
        let known = known.withLock { $0 }
        return Set(events.lazy.map(\.subscriber).filter { !known.contains($0) })
    }

    /// Remembers `subscribers` once the transaction of `db` commits.
    func remember(_ subscribers: Set<String>, after db: Database) {
        guard !subscribers.isEmpty else { return }
        db.afterNextTransaction(onCommit: { _ in self.known.withLock { $0.formUnion(subscribers) } })
    }
}
