import HearthAuth
import HearthOutbox

/// Turns accounts made and deleted into the events of the functions whose account triggers
/// they fire, for the account store to commit with them (``HearthAuth/AccountEventRecorder``):
/// a CloudEvent per function and change, with Firebase Auth's type
/// (`google.firebase.auth.user.v1.created`/`deleted`), source and the account as data.
///
/// As in Firebase, an account made by a first sign-in with a custom token makes no event.
public final class AccountTriggerRecorder: AccountEventRecorder {
    public typealias Subscription = TriggerSubscription<AccountTrigger>

    public static let source = "accounts"
    private let subscriptions: [Subscription]
    private let projectID: String
    private let backlog: EventBacklog
    private let makeID: @Sendable () -> String
    private let now: @Sendable () -> Int64
    /// Wakes the lanes after each commit that recorded events.
    public let signal = CommitSignal()

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

    public func committed() {
        signal.fire()
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
