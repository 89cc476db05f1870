import HearthAuth

/// A blocking function's trigger: which account event it is asked about, and which of the
/// provider's tokens it is given (Firebase's `blockingTrigger`).
public struct BlockingTrigger: Sendable, Hashable {
    public var kind: AccountBlockingEvent.Kind
    /// Gives the provider's ID token (`oauth_id_token`) of a provider's sign-in.
    public var forwardsIDToken: Bool
    /// Gives the provider's access token (`oauth_access_token`) of a provider's sign-in.
    public var forwardsAccessToken: Bool

    public init(kind: AccountBlockingEvent.Kind, forwardsIDToken: Bool = false, forwardsAccessToken: Bool = false) {
        self.kind = kind
        self.forwardsIDToken = forwardsIDToken
        self.forwardsAccessToken = forwardsAccessToken
    }

    /// Reads `blockingTrigger` from a manifest or webhook entry:
    /// `{eventType: providers/cloud.auth/eventTypes/user.beforeCreate, options: {idToken: true}}`.
    /// - Throws: ``FunctionError`` for an event type that is not a blocking one.
    static func parse(_ entry: [String: Any], function: String) throws -> BlockingTrigger {
        let eventType = entry["eventType"] as? String ?? ""
        let prefix = "providers/cloud.auth/eventTypes/user."
        guard eventType.hasPrefix(prefix), let kind = AccountBlockingEvent.Kind(rawValue: String(eventType.dropFirst(prefix.count))) else {
            throw FunctionError.invalidDefinition(
                function: function, "blockingTrigger's eventType must be \(prefix)beforeCreate or \(prefix)beforeSignIn")
        }
        let options = entry["options"] as? [String: Any] ?? [:]
        // Unset options come as explicit nulls.
        return BlockingTrigger(
            kind: kind, forwardsIDToken: options["idToken"] as? Bool ?? false, forwardsAccessToken: options["accessToken"] as? Bool ?? false)
    }
}
