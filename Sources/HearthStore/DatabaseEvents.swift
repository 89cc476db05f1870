import Synchronization

/// Something a ``Database`` published: writes that reached its log, or a setting that changed.
public enum DatabaseEvent: Sendable {
    /// Writes that reached the log, in log order, and the version they made (already
    /// published to readers when this is delivered). A replica that started over from a
    /// snapshot reports the whole tree as one `set` of the root at the snapshot's position.
    case committed([Database.Committed], Database.Published)
    /// The setting with this name changed (on a replica, also when another node changed it);
    /// ``Database/setting(named:)`` already returns the new value.
    case settingChanged(String)
}

/// The one stream of events of the databases that share it: a ``DatabaseProvider`` makes one
/// and hands it to every database it opens (a database opened on its own gets one of its own),
/// and the composition root subscribes to it once (HearthEngine's `DatabaseOperations` does,
/// for its listener hub and rules registry).
///
/// Delivery is synchronous, on the thread that made the event: a single node's commit queue,
/// or a replica's replication task. A database's events arrive one at a time and in log order,
/// and before the writes they report are acknowledged: that is what lets a client that is
/// told its write was refused have been sent the write that refused it, a rules deploy be in
/// force when it returns, and a realtime `ok` follow the events its write caused. So a
/// subscriber must return quickly and never wait on the database (the listener hub hands the
/// work to a queue of its own).
///
/// The list of subscribers is small and bounded (`maxSubscribers`): subscribing is for the
/// composition root and tests, not for each request. Threading: `subscribers` is read (one
/// uncontended lock) once per event.
public final class DatabaseEvents: Sendable {
    /// Called with the database an event comes from and the event.
    public typealias Subscriber = @Sendable (Database, DatabaseEvent) -> Void

    /// The most subscribers one stream takes.
    let maxSubscribers: Int
    private let subscribers = Mutex<[Subscriber]>([])

    /// A stream taking at most `maxSubscribers` subscribers, a bound that catches a subscription per request.
    public init(maxSubscribers: Int = 16) {
        self.maxSubscribers = maxSubscribers
    }

    /// Calls `subscriber` with every event published from now on, for as long as the stream
    /// lives. A subscription past `maxSubscribers` is a programming error (a subscription
    /// made per request rather than once) and stops the process.
    public func subscribe(_ subscriber: @escaping Subscriber) {
        subscribers.withLock { subscribers in
            precondition(subscribers.count < maxSubscribers, "more than \(maxSubscribers) subscribers to one database event stream")
            subscribers.append(subscriber)
        }
    }

    /// Delivers `event` from `database` to every subscriber, in the order they subscribed.
    func publish(_ event: DatabaseEvent, from database: Database) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber(database, event) }
    }
}
