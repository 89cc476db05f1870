/// An account at an identity provider that signs in to a Hearth account (Firebase's
/// `providerUserInfo` entries other than `password` and `phone`).
public struct LinkedIdentity: Sendable, Equatable, Hashable {
    /// The provider's ID: `google.com`, `github.com`, `oidc.<name>`, `saml.<name>`.
    public var providerID: String
    /// The user's ID at the provider (an OIDC `sub`, a GitHub user number).
    public var rawID: String
    public var email: String?
    public var displayName: String?
    public var photoURL: String?

    public init(providerID: String, rawID: String, email: String? = nil, displayName: String? = nil, photoURL: String? = nil) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.displayName = displayName
        self.photoURL = photoURL
    }
}
