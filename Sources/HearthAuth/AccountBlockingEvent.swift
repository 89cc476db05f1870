import HearthCore

/// What a blocking function is asked before an account is made or signs in (Firebase's
/// `beforeUserCreated` and `beforeUserSignedIn`).
public struct AccountBlockingEvent: Sendable {
    /// When it is asked, by Firebase's event names.
    public enum Kind: String, Sendable, CaseIterable {
        /// Before a new account is stored: its answer may change the account or refuse it.
        case beforeCreate
        /// Before a session is issued: its answer may change the account, add claims to this
        /// session's tokens, or refuse the sign-in.
        case beforeSignIn
    }

    public var kind: Kind
    /// A random ID, for the function's logs and idempotency.
    public var id: String
    /// The account: as it will be stored (``Kind/beforeCreate``) or as it is.
    public var user: UserRecord
    /// How the user signs in: `password`, `emailLink`, or the provider's ID (`google.com`).
    public var signInMethod: String
    public var client: SignInClient
    /// Milliseconds since the epoch.
    public var time: Int64
    /// For a provider's sign-in: its profile of the user and its tokens (a function that asks
    /// for them gets them, as Firebase's `forwardInboundCredentials`).
    public var federated: FederatedProfile?

    public init(
        kind: Kind, id: String, user: UserRecord, signInMethod: String, client: SignInClient, time: Int64,
        federated: FederatedProfile? = nil
    ) {
        self.kind = kind
        self.id = id
        self.user = user
        self.signInMethod = signInMethod
        self.client = client
        self.time = time
        self.federated = federated
    }
}
