import HearthCore
import HearthOutbox
import HearthStore
import Synchronization

/// Turns database writes into the events of the functions whose triggers they fire, for the
/// database to commit with them (``CommitEventRecorder``): one CloudEvent per function and
/// matched location that changed, in key order, with Firebase's type, attributes and data.
///
/// Threading: the triggers sit behind a lock that is read once per write (under the database
/// writer's lock) and replaced whole when functions are deployed.
public final class DatabaseEventRecorder: CommitEventRecorder {
    /// A function and the trigger it registered.
    public typealias Subscription = TriggerSubscription<DatabaseTrigger>

    /// What Firebase puts in every database event beside the change: the host databases are
    /// served from and the region.
    public struct Naming: Sendable {
        /// The `firebasedatabasehost` attribute: the host part of the databases' URLs.
        public var databaseHost: String
        /// The `location` attribute, the region in `source`.
        public var location: String
        /// The project, in the source of account events.
        public var projectID: String

        public init(databaseHost: String, location: String = "us-central1", projectID: String = "hearth") {
            self.databaseHost = databaseHost
            self.location = location
            self.projectID = projectID
        }
    }

    private let subscriptions = Mutex<[Subscription]>([])
    private let naming: Naming
    private let backlog: EventBacklog
    private let makeID: @Sendable () -> String

    /// - Parameters:
    ///   - backlog: counts recorded events, and refuses them past its bound.
    ///   - makeID: a new event ID (unique; random in production).
    public init(naming: Naming, backlog: EventBacklog, makeID: @escaping @Sendable () -> String) {
        self.naming = naming
        self.backlog = backlog
        self.makeID = makeID
    }

    /// Replaces the triggers (a deploy).
    public func setSubscriptions(_ subscriptions: [Subscription]) {
        self.subscriptions.withLock { $0 = subscriptions }
    }

    /// The functions that watch the database `name`.
    public func functions(watching name: String) -> [String] {
        subscriptions.withLock { $0 }.filter { $0.trigger.watches(database: name) }.map(\.function)
    }

    public func events(
        database: String, write: ResolvedWrite, origin: WriteOrigin, before: DatabaseState, after: DatabaseState, time: Int64
    ) -> [OutboxEvent] {
        let subscriptions = self.subscriptions.withLock { $0 }
        guard !subscriptions.isEmpty else { return [] }
        let changedPaths = write.changedPaths
        var events: [OutboxEvent] = []
        // Functions that share a pattern share its changes, and a changed location's data is
        // encoded once whichever functions it goes to.
        var changesByPattern: [PathPattern: [PathPattern.Change]] = [:]
        var dataByPath: [Path: [UInt8]] = [:]
        // Functions with the same trigger get the same event (body and ID), as Eventarc routes
        // one event to every trigger that matches it.
        var eventsByTrigger: [EventKey: (id: String, body: [UInt8])] = [:]
        for subscription in subscriptions where subscription.trigger.watches(database: database) {
            let trigger = subscription.trigger
            let queue = EventBacklog.Queue(source: "database/\(database)", function: subscription.function)
            let changes = changesByPattern[trigger.ref] ?? {
                let found = trigger.ref.changes(from: before.root, to: after.root, changedPaths: changedPaths)
                changesByPattern[trigger.ref] = found
                return found
            }()
            for change in changes where trigger.change.includes(before: change.before, after: change.after) {
                guard backlog.admit(queue) else { continue }
                let data = dataByPath[change.path] ?? {
                    let encoded = DatabaseEventData.encode(before: change.before, after: change.after)
                    dataByPath[change.path] = encoded
                    return encoded
                }()
                let key = EventKey(path: change.path, change: trigger.change)
                let made = eventsByTrigger[key] ?? {
                    let event = cloudEvent(trigger: trigger, database: database, change: change, data: data, origin: origin, time: time)
                    let made = (id: event.id, body: event.structured())
                    eventsByTrigger[key] = made
                    return made
                }()
                events.append(OutboxEvent(subscriber: subscription.function, id: made.id, body: made.body, time: time))
            }
        }
        return events
    }

    /// What makes two functions' events the same event.
    private struct EventKey: Hashable {
        var path: Path
        var change: DatabaseTrigger.Change
    }

    private func cloudEvent(
        trigger: DatabaseTrigger, database: String, change: PathPattern.Change, data: [UInt8], origin: WriteOrigin, time: Int64
    ) -> CloudEvent {
        let ref = change.path.keys.map(\.string).joined(separator: "/")
        var extensions = [
            "instance": database,
            "ref": ref,
            "firebasedatabasehost": naming.databaseHost,
            "location": naming.location,
            "authtype": origin.kind.rawValue,
        ]
        if let uid = origin.uid { extensions["authid"] = uid }
        return CloudEvent(
            id: makeID(),
            source: "//firebasedatabase.googleapis.com/projects/_/locations/\(naming.location)/instances/\(database)",
            type: trigger.change.eventType,
            subject: "refs/\(ref)",
            time: time,
            extensions: extensions,
            data: data)
    }
}
