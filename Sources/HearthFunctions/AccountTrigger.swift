/// An account trigger: accounts made or deleted (Firebase Auth's events, as Eventarc
/// delivers them to CloudEvents functions).
public struct AccountTrigger: Sendable, Hashable {
    public enum Change: String, Sendable, CaseIterable {
        case created
        case deleted

        /// The CloudEvent type.
        public var eventType: String { "google.firebase.auth.user.v1.\(rawValue)" }

        public init?(eventType: String) {
            let prefix = "google.firebase.auth.user.v1."
            guard eventType.hasPrefix(prefix) else { return nil }
            self.init(rawValue: String(eventType.dropFirst(prefix.count)))
        }
    }

    public var change: Change

    public init(change: Change) {
        self.change = change
    }
}
