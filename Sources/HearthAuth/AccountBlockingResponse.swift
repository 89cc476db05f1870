import HearthCore

/// What a blocking function answered: the account fields it sets (nil leaves one as it is)
/// and, before a sign-in, claims for that session's tokens only. An empty answer lets the
/// account be made or sign in unchanged.
public struct AccountBlockingResponse: Sendable, Equatable {
    /// A new display name; `.some(nil)` removes it.
    public var displayName: String??
    /// A new photo URL; `.some(nil)` removes it.
    public var photoURL: String??
    public var disabled: Bool?
    public var emailVerified: Bool?
    /// Claims for every token of the account from now on (an object).
    public var customClaims: Node?
    /// Claims for the tokens of this session only (an object; ``AccountBlockingEvent/Kind/beforeSignIn`` only).
    public var sessionClaims: Node?

    public init(
        displayName: String?? = nil, photoURL: String?? = nil, disabled: Bool? = nil, emailVerified: Bool? = nil,
        customClaims: Node? = nil, sessionClaims: Node? = nil
    ) {
        self.displayName = displayName
        self.photoURL = photoURL
        self.disabled = disabled
        self.emailVerified = emailVerified
        self.customClaims = customClaims
        self.sessionClaims = sessionClaims
    }

    /// True when it changes nothing.
    public var isEmpty: Bool { self == AccountBlockingResponse() }

    /// Refuses claims Firebase refuses: not an object, a reserved name, or more than 1,000
    /// bytes of JSON.
    /// - Throws: `BLOCKING_FUNCTION_ERROR_RESPONSE` naming what is wrong.
    public func validated(for kind: AccountBlockingEvent.Kind) throws(AuthError) -> AccountBlockingResponse {
        for (name, claims) in [("customClaims", customClaims), ("sessionClaims", sessionClaims)] {
            guard let claims, !claims.isNull else { continue }
            guard let children = claims.children else { throw Self.refusal("\(name) is not an object") }
            if let reserved = children.first(where: { TokenIssuer.reservedClaims.contains($0.key.string) }) {
                throw Self.refusal("\(name) uses the reserved claim \"\(reserved.key.string)\"")
            }
            guard JSONWriter.bytes(claims).count <= 1000 else { throw Self.refusal("\(name) is more than 1000 bytes") }
        }
        guard kind == .beforeSignIn || sessionClaims == nil else {
            // Firebase ignores them before a creation; the sign-in that follows may set them.
            var copy = self
            copy.sessionClaims = nil
            return copy
        }
        return self
    }

    /// Writes the fields it sets onto `user`.
    public func apply(to user: inout UserRecord) {
        if let displayName { user.displayName = displayName }
        if let photoURL { user.photoURL = photoURL }
        if let disabled { user.disabled = disabled }
        if let emailVerified { user.emailVerified = emailVerified }
        if let customClaims { user.customClaims = customClaims }
    }

    /// A blocking function's answer that cannot be used.
    public static func refusal(_ reason: String) -> AuthError {
        AuthError("BLOCKING_FUNCTION_ERROR_RESPONSE", detail: reason)
    }
}
