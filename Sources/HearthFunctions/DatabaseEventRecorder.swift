import HearthCore
import HearthOutbox
import HearthStore
import Synchronization

/// Turns database writes into the events of the functions whose triggers they fire, for the
/// database to commit with them (``CommitEventRecorder``): one event per function and matched
/// location that changed, in key order, kept as a ``RecordedDatabaseEvent`` and delivered as
/// the CloudEvent Firebase sends, with its type, attributes and data (``EventEnvelope``).
///
/// The triggers are kept as a plan per database (made at its first write, dropped when the
/// triggers change): the functions watching it grouped by path pattern and change, each with
/// its backlog queue, so a write computes each pattern's changes and each event once however
/// many functions share them, and matches no database pattern.
///
/// Threading: the triggers and the plans sit behind one lock, taken once per write (under the
/// database writer's lock); a deploy replaces the triggers whole and drops the plans.
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

    /// The functions watching one database, grouped for its writes.
    struct Plan: Sendable {
        struct Watch: Sendable {
            var change: DatabaseTrigger.Change
            var trigger: DatabaseTrigger
            /// The functions' backlog queues (a queue names its function).
            var queues: [EventBacklog.Queue]
        }

        struct Pattern: Sendable {
            var ref: PathPattern
            var watches: [Watch]
        }

        var patterns: [Pattern] = []
    }

    private struct State {
        var subscriptions: [Subscription] = []
        var plans: [String: Plan] = [:]
    }

    private let state = Mutex(State())
    private let backlog: EventBacklog
    private let makeID: @Sendable () -> String

    /// - Parameters:
    ///   - backlog: counts recorded events, and refuses them past its bound.
    ///   - makeID: a new event ID (unique; random in production).
    public init(backlog: EventBacklog, makeID: @escaping @Sendable () -> String) {
        self.backlog = backlog
        self.makeID = makeID
    }

    /// Replaces the triggers (a deploy).
    public func setSubscriptions(_ subscriptions: [Subscription]) {
        state.withLock { $0 = State(subscriptions: subscriptions) }
    }

    /// The functions that watch the database `name`.
    public func functions(watching name: String) -> [String] {
        state.withLock { $0.subscriptions }.filter { $0.trigger.watches(database: name) }.map(\.function)
    }

    /// The plan for `database`, made at its first use.
    func plan(for database: String) -> Plan {
        state.withLock { state in
            if let plan = state.plans[database] { return plan }
            var plan = Plan()
            for subscription in state.subscriptions where subscription.trigger.watches(database: database) {
                let trigger = subscription.trigger
                let queue = EventBacklog.Queue(source: "database/\(database)", function: subscription.function)
                let patternIndex = plan.patterns.firstIndex { $0.ref == trigger.ref } ?? {
                    plan.patterns.append(Plan.Pattern(ref: trigger.ref, watches: []))
                    return plan.patterns.count - 1
                }()
                if let watchIndex = plan.patterns[patternIndex].watches.firstIndex(where: { $0.change == trigger.change }) {
                    plan.patterns[patternIndex].watches[watchIndex].queues.append(queue)
                } else {
                    plan.patterns[patternIndex].watches.append(Plan.Watch(change: trigger.change, trigger: trigger, queues: [queue]))
                }
            }
            // Bounded: databases are bounded by the server's open-database limit, and a plan is small.
            if state.plans.count >= 10_000 { state.plans.removeAll() }
            state.plans[database] = plan
            return plan
        }
    }

    public func events(
        database: String, write: ResolvedWrite, origin: WriteOrigin, before: DatabaseState, after: DatabaseState, time: Int64
    ) -> [OutboxEvent] {
        let plan = plan(for: database)
        guard !plan.patterns.isEmpty else { return [] }
        let changedPaths = write.changedPaths
        var events: [OutboxEvent] = []
        // A changed location's data is encoded once whichever functions it goes to, and
        // functions with the same change at the same location get the same event (body and
        // ID), as Eventarc routes one event to every trigger that matches it. A pattern reports
        // each location once and its watches differ in change, so only a location two patterns
        // match is looked up (in dictionaries kept only when the plan has several patterns).
        let shared = plan.patterns.count > 1
        var dataByPath: [Path: [UInt8]] = [:]
        var eventsByKey: [EventKey: (id: String, body: [UInt8])] = [:]
        for pattern in plan.patterns {
            for change in pattern.ref.changes(from: before.root, to: after.root, changedPaths: changedPaths) {
                var data: [UInt8]?
                for watch in pattern.watches where watch.change.includes(before: change.before, after: change.after) {
                    let admitted = backlog.admit(watch.queues)
                    guard !admitted.isEmpty else { continue }
                    let key = EventKey(path: change.path, change: watch.change)
                    let event: (id: String, body: [UInt8])
                    if shared, let earlier = eventsByKey[key] {
                        event = earlier
                    } else {
                        let changeData = data ?? {
                            let encoded = (shared ? dataByPath[change.path] : nil)
                                ?? DatabaseEventData.encode(before: change.before, after: change.after)
                            if shared { dataByPath[change.path] = encoded }
                            return encoded
                        }()
                        data = changeData
                        let recorded = RecordedDatabaseEvent(
                            instance: database, change: watch.change, ref: String(change.path.description.utf8.dropFirst())!,
                            authtype: origin.kind.rawValue, authid: origin.uid)
                        event = (makeID(), recorded.stored(data: changeData))
                        if shared { eventsByKey[key] = event }
                    }
                    for queue in admitted {
                        events.append(OutboxEvent(subscriber: queue.function, id: event.id, body: event.body, time: time))
                    }
                }
            }
        }
        return events
    }

    /// What makes two functions' events the same event.
    private struct EventKey: Hashable {
        var path: Path
        var change: DatabaseTrigger.Change
    }
}
