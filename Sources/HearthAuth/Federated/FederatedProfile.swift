import HearthCore

/// Who a provider says signed in.
public struct FederatedProfile: Sendable, Equatable {
    public var providerID: String
    /// The user's ID at the provider (`sub`, or GitHub's user number).
    public var rawID: String
    public var email: String?
    /// True only when the provider vouches for the address.
    public var emailVerified: Bool
    public var displayName: String?
    public var photoURL: String?
    /// The provider's own description of the user (Firebase's `rawUserInfo`).
    public var rawUserInfo: Node
    /// The provider's tokens, given back as Firebase gives them (`oauthIdToken`, `oauthAccessToken`).
    public var idToken: String?
    public var accessToken: String?

    public init(
        providerID: String, rawID: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
        photoURL: String? = nil, rawUserInfo: Node = .null, idToken: String? = nil, accessToken: String? = nil
    ) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.rawUserInfo = rawUserInfo
        self.idToken = idToken
        self.accessToken = accessToken
    }

    var identity: LinkedIdentity {
        LinkedIdentity(providerID: providerID, rawID: rawID, email: email, displayName: displayName, photoURL: photoURL)
    }
}
