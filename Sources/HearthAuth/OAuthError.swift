/// A refusal of the OAuth 2.0 token endpoint, in RFC 6749's terms (section 5.2): `error` is one
/// of its codes (`invalid_request`, `invalid_grant`, `unsupported_grant_type`, …) and
/// `description` says what was wrong, as Google's token endpoint answers.
public struct OAuthError: Error, Sendable, Equatable {
    public let error: String
    public let description: String

    public init(_ error: String, _ description: String) {
        self.error = error
        self.description = description
    }

    static func invalidGrant(_ description: String) -> OAuthError { OAuthError("invalid_grant", description) }
}
