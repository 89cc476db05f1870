import HearthFiles
import HearthOutbox

/// Turns changes of stored objects into the events of the functions whose storage triggers
/// they fire, for the metadata store to commit with them (``HearthFiles/FileEventRecorder``): a
/// CloudEvent per function and change, with Cloud Storage's type, source, subject and the
/// object's resource (`storage#object`) as data. Replacing an object's content reports the old
/// generation deleted and the new one finalized, as Cloud Storage does.
public final class StorageEventRecorder: FileEventRecorder {
    public typealias Subscription = TriggerSubscription<StorageTrigger>

    public static let source = "files"
    private let subscriptions: [Subscription]
    /// The server's address as an object's links name it (`http://host:port`).
    private let base: String
    private let backlog: EventBacklog
    private let makeID: @Sendable () -> String
    private let now: @Sendable () -> Int64
    /// Wakes the lanes after each commit that recorded events.
    public let signal = CommitSignal()

    public init(
        subscriptions: [Subscription], base: String, backlog: EventBacklog, makeID: @escaping @Sendable () -> String,
        now: @escaping @Sendable () -> Int64
    ) {
        self.subscriptions = subscriptions
        self.base = base
        self.backlog = backlog
        self.makeID = makeID
        self.now = now
    }

    /// The functions with storage triggers.
    public var functions: [String] { subscriptions.map(\.function) }

    public func committed() {
        signal.fire()
    }

    public func events(for changes: [FileChange]) -> [OutboxEvent] {
        guard !subscriptions.isEmpty else { return [] }
        var events: [OutboxEvent] = []
        for change in changes {
            let (kind, object, time): (StorageTrigger.Change, StoredObject, Int64) = switch change {
            case .finalized(let object): (.finalized, object, object.updated)
            case .deleted(let object): (.deleted, object, now())
            case .metadataUpdated(let object): (.metadataUpdated, object, object.updated)
            }
            var data: [UInt8]?
            for subscription in subscriptions where subscription.trigger.change == kind && subscription.trigger.bucket == object.bucket {
                guard backlog.admit(EventBacklog.Queue(source: Self.source, function: subscription.function)) else { continue }
                let encoded = data ?? CloudObjectResource(object, base: base).json()
                data = encoded
                let event = CloudEvent(
                    id: makeID(), source: "//storage.googleapis.com/projects/_/buckets/\(object.bucket)", type: kind.eventType,
                    subject: "objects/\(object.name)", time: time, extensions: ["bucket": object.bucket], data: encoded)
                events.append(OutboxEvent(subscriber: subscription.function, id: event.id, body: event.structured(), time: time))
            }
        }
        return events
    }
}
