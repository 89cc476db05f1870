import HearthCore

/// One session, as its refresh token records it (the token itself is kept only as a digest).
public struct RefreshTokenRecord: Sendable, Equatable {
    public var uid: String
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    /// How the session signed in (`password`, `custom`, …); nil for sessions recorded
    /// before Hearth kept it.
    public var provider: String?
    /// Developer claims the session's ID tokens carry besides the account's own.
    public var claims: Node
    /// True once the account's sessions were revoked (a password or email change, an admin).
    public var revoked = false

    public init(uid: String, createdAt: Int64, provider: String? = nil, claims: Node = .null) {
        self.uid = uid
        self.createdAt = createdAt
        self.provider = provider
        self.claims = claims
    }
}
