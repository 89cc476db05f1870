import HearthAuth
import HearthOutbox
import Synchronization

/// Turns accounts made and deleted into the events of the functions whose account triggers
/// they fire, for the account store to commit with them (``HearthAuth/AccountEventRecorder``):
/// a CloudEvent per function and change, with Firebase Auth's type
/// (`google.firebase.auth.user.v1.created`/`deleted`), source and the account as data.
///
/// As in Firebase, an account made by a first sign-in with a custom token makes no event.
public final class AccountTriggerRecorder: AccountEventRecorder {
    /// A function and the trigger it registered.
    public struct Subscription: Sendable {
        public var function: String
        public var trigger: AccountTrigger

        public init(function: String, trigger: AccountTrigger) {
            self.function = function
            self.trigger = trigger
        }
    }

    public static let source = "accounts"
    private let subscriptions: [Subscription]
    private let projectID: String
    private let backlog: EventBacklog
    private let makeID: @Sendable () -> String
    private let now: @Sendable () -> Int64
    private let onCommit = Mutex<(@Sendable () -> Void)?>(nil)

    public init(
        subscriptions: [Subscription], projectID: String, backlog: EventBacklog, makeID: @escaping @Sendable () -> String,
        now: @escaping @Sendable () -> Int64
    ) {
        self.subscriptions = subscriptions
        self.projectID = projectID
        self.backlog = backlog
        self.makeID = makeID
        self.now = now
    }

    /// The functions with account triggers.
    public var functions: [String] { subscriptions.map(\.function) }

    /// Called after each commit that recorded events (the functions' runner wakes the lanes).
    public func whenCommitted(_ action: @escaping @Sendable () -> Void) {
        onCommit.withLock { $0 = action }
    }

    public func committed() {
        onCommit.withLock { $0 }?()
    }

    public func events(for change: AccountLifecycleChange) -> [OutboxEvent] {
        let (kind, user, time): (AccountTrigger.Change, UserRecord, Int64) = switch change {
        case .created(let user): (.created, user, user.createdAt)
        case .deleted(let user): (.deleted, user, now())
        }
        if kind == .created, user.provider == "custom" { return [] }
        var data: [UInt8]?
        var events: [OutboxEvent] = []
        for subscription in subscriptions where subscription.trigger.change == kind {
            guard backlog.admit(EventBacklog.Queue(source: Self.source, function: subscription.function)) else { continue }
            let encoded = data ?? AccountEventData.json(user)
            data = encoded
            let event = CloudEvent(
                id: makeID(), source: "//firebaseauth.googleapis.com/projects/\(projectID)", type: kind.eventType,
                subject: "users/\(user.uid)", time: time, data: encoded)
            events.append(OutboxEvent(subscriber: subscription.function, id: event.id, body: event.structured(), time: time))
        }
        return events
    }
}
