extension UserRecord {
    /// One way into an account, as Firebase lists them (`providerUserInfo`, `providerData`).
    public struct ProviderEntry: Sendable, Equatable {
        /// `password`, `phone`, or an identity provider's ID.
        public var providerID: String
        /// The user's ID there: the email for `password`, the number for `phone`.
        public var rawID: String
        public var email: String?
        public var displayName: String?
        public var photoURL: String?
        public var phoneNumber: String?
    }

    /// Its ways in: the password (or emailed links) under its email, its phone number, then its
    /// linked identities.
    public var providerEntries: [ProviderEntry] {
        var entries: [ProviderEntry] = []
        if let email, passwordHash != nil || emailLinkSignIn {
            entries.append(ProviderEntry(providerID: "password", rawID: email, email: email, displayName: displayName, photoURL: photoURL))
        }
        if let phoneNumber {
            entries.append(ProviderEntry(providerID: "phone", rawID: phoneNumber, phoneNumber: phoneNumber))
        }
        for identity in identities {
            entries.append(ProviderEntry(
                providerID: identity.providerID, rawID: identity.rawID, email: identity.email, displayName: identity.displayName,
                photoURL: identity.photoURL))
        }
        return entries
    }
}
