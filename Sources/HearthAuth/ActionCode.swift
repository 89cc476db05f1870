/// A one-time code sent by email (Firebase's "out-of-band" code): it resets a password,
/// verifies an email address, signs in by link, or confirms or reverts an email change.
public struct ActionCode: Sendable, Equatable {
    /// What the code does, named as Firebase's `requestType`.
    public enum Kind: String, Sendable, CaseIterable {
        case passwordReset = "PASSWORD_RESET"
        case verifyEmail = "VERIFY_EMAIL"
        case emailSignIn = "EMAIL_SIGNIN"
        case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
        case recoverEmail = "RECOVER_EMAIL"

        /// The `mode` of the action link (`/__/auth/action?mode=…`).
        public var mode: String {
            switch self {
            case .passwordReset: "resetPassword"
            case .verifyEmail: "verifyEmail"
            case .verifyAndChangeEmail: "verifyAndChangeEmail"
            case .emailSignIn: "signIn"
            case .recoverEmail: "recoverEmail"
            }
        }
    }

    public var kind: Kind
    /// The account it acts on; nil for a sign-in link to an email that has no account yet.
    public var uid: String?
    /// The address the code was sent to (lower-cased).
    public var email: String
    /// For `VERIFY_AND_CHANGE_EMAIL`, the address that becomes the account's; for
    /// `RECOVER_EMAIL`, the address it is changed back to.
    public var newEmail: String?
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// Where the app wants the user to go afterwards (`continueUrl`).
    public var continueURL: String?

    public init(
        kind: Kind, uid: String?, email: String, newEmail: String? = nil, createdAt: Int64, expiresAt: Int64,
        continueURL: String? = nil
    ) {
        self.kind = kind
        self.uid = uid
        self.email = email
        self.newEmail = newEmail
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.continueURL = continueURL
    }
}
