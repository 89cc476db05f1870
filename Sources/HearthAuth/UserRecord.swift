import HearthCore

/// One account.
public struct UserRecord: Sendable, Equatable {
    /// The user ID (Firebase's `localId`, the `sub` of their tokens).
    public var uid: String
    /// The email address, stored lower-cased; nil for anonymous and custom-token users.
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var photoURL: String?
    /// The scrypt hash of the password (see ``PasswordHasher``); nil without a password.
    public var passwordHash: String?
    public var disabled: Bool
    /// Custom claims added to every ID token (an object, or `.null` for none).
    public var customClaims: Node
    /// How the account signs in: `password`, `anonymous` or `custom`.
    public var provider: String
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    /// Milliseconds since the epoch; nil before the first sign-in.
    public var lastLoginAt: Int64?
    /// The last time a session of the account got a new ID token (milliseconds since the
    /// epoch; Firebase's `lastRefreshAt`): the account was in use then.
    public var lastRefreshAt: Int64?
    /// Seconds since the epoch; refresh tokens issued before it are revoked.
    public var validSince: Int64
    /// The phone number in E.164 form (`+15555550100`), unique among accounts.
    public var phoneNumber: String?
    /// Identity-provider accounts linked to this one.
    public var identities: [LinkedIdentity] = []
    /// Milliseconds since the epoch of the last password change; nil without a password.
    public var passwordUpdatedAt: Int64?
    /// True once the account signed in with an emailed link (its address is a way in).
    public var emailLinkSignIn = false

    public init(
        uid: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
        photoURL: String? = nil, passwordHash: String? = nil, disabled: Bool = false, customClaims: Node = .null,
        provider: String, createdAt: Int64, lastLoginAt: Int64? = nil, validSince: Int64
    ) {
        self.uid = uid
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.passwordHash = passwordHash
        self.disabled = disabled
        self.customClaims = customClaims
        self.provider = provider
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
        self.validSince = validSince
    }

    /// True for an account made by anonymous sign-in that has no email, password or linked
    /// identity yet.
    public var isAnonymous: Bool { provider == "anonymous" && email == nil && identities.isEmpty && phoneNumber == nil }
}
