import Synchronization

/// A function and the trigger it registered, as a recorder keeps them.
public struct TriggerSubscription<Trigger: Sendable>: Sendable {
    public var function: String
    public var trigger: Trigger

    public init(function: String, trigger: Trigger) {
        self.function = function
        self.trigger = trigger
    }
}

/// What a store's recorder does after a commit that recorded events: the functions' runner
/// sets it (``whenCommitted(_:)``) to wake the lanes of that store.
public final class CommitSignal: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    public init() {}

    public func whenCommitted(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    /// A commit that recorded events happened.
    public func fire() {
        action.withLock { $0 }?()
    }
}
