/// A sign-in sent to a provider: what its return must match.
public struct PendingSignIn: Sendable, Equatable {
    public var providerID: String
    public var state: String
    public var nonce: String
    public var codeVerifier: String
    public var redirectURI: String
    /// Milliseconds since the epoch.
    public var expiresAt: Int64

    public init(providerID: String, state: String, nonce: String, codeVerifier: String, redirectURI: String, expiresAt: Int64) {
        self.providerID = providerID
        self.state = state
        self.nonce = nonce
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.expiresAt = expiresAt
    }
}
