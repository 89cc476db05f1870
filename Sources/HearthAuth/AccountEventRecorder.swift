import HearthOutbox

/// An account coming or going, as the functions' account triggers see it.
public enum AccountLifecycleChange: Sendable {
    /// A new account: signed up, made by an admin, or made at a first sign-in. An import,
    /// which may replace an account, is not one (as in Firebase).
    case created(UserRecord)
    /// An account deleted, as it was before.
    case deleted(UserRecord)
}

/// Decides which events an account change records (the functions' account triggers;
/// HearthFunctions implements it). The account store asks it inside the transaction that makes
/// the change and commits its events with it, so neither is durable without the other. Called
/// while that transaction is open: it must be quick and must not touch the store.
public protocol AccountEventRecorder: Sendable {
    /// The events `change` makes.
    func events(for change: AccountLifecycleChange) -> [OutboxEvent]

    /// A transaction that recorded events committed: they may be delivered now.
    func committed()
}
