/// A function Hearth delivers events to: its name, what triggers it, where it runs, and how
/// its events are retried.
public struct FunctionDefinition: Sendable {
    /// What makes events for it.
    public enum Trigger: Sendable, Hashable {
        /// Realtime Database changes.
        case database(DatabaseTrigger)
        /// Cloud Storage object changes.
        case storage(StorageTrigger)
        /// Accounts made or deleted.
        case account(AccountTrigger)
    }

    /// Its name: unique among the server's functions (the outbox files its events under it).
    public var name: String
    public var trigger: Trigger
    /// Where its events go.
    public var invoker: any EventInvoker
    public var policy: DeliveryPolicy

    public init(name: String, trigger: Trigger, invoker: any EventInvoker, policy: DeliveryPolicy = DeliveryPolicy()) {
        self.name = name
        self.trigger = trigger
        self.invoker = invoker
        self.policy = policy
    }

    /// True when `name` may name a function: 1–63 letters, digits, `-` and `_`, starting with
    /// a letter (Cloud Functions' rule).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63,
            ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }
}
