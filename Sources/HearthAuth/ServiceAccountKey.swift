/// A service account's key, as the server keeps it: the public half only. The private half is
/// in the key file given to the operator when the key was made, and nowhere else.
public struct ServiceAccountKey: Sendable, Equatable {
    /// The key's ID (`private_key_id` in the key file, `kid` in the assertions it signs).
    public var id: String
    /// The account's address (`client_email`): the issuer of its assertions.
    public var clientEmail: String
    /// The RSA public key, PEM.
    public var publicKeyPEM: String
    /// The token endpoint written into the key file: its assertions must be addressed there.
    public var tokenURI: String
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    /// When it was revoked (milliseconds), or nil while it works.
    public var revokedAt: Int64?

    public init(id: String, clientEmail: String, publicKeyPEM: String, tokenURI: String, createdAt: Int64, revokedAt: Int64? = nil) {
        self.id = id
        self.clientEmail = clientEmail
        self.publicKeyPEM = publicKeyPEM
        self.tokenURI = tokenURI
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
