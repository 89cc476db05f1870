/// A refusal from the account service, named by Firebase Auth's error code so that Firebase
/// clients recognise it (`EMAIL_EXISTS`, `INVALID_LOGIN_CREDENTIALS`, …).
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Firebase's code, such as `EMAIL_EXISTS`.
    public let code: String
    /// Extra text Firebase puts after the code (`WEAK_PASSWORD : Password should be at least 6 characters`).
    public let detail: String?

    /// A refusal named `code`. What it means on the wire (Identity Toolkit's HTTP status for
    /// the code) is the transport's business.
    public init(_ code: String, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The `message` of Firebase's error body: the code, then ` : detail` if any.
    public var message: String { detail.map { "\(code) : \($0)" } ?? code }

    public var description: String { message }

    public static let emailExists = AuthError("EMAIL_EXISTS")
    public static let invalidEmail = AuthError("INVALID_EMAIL")
    public static let missingEmail = AuthError("MISSING_EMAIL")
    public static let missingPassword = AuthError("MISSING_PASSWORD")
    public static let weakPassword = AuthError("WEAK_PASSWORD", detail: "Password should be at least 6 characters")
    public static let invalidLoginCredentials = AuthError("INVALID_LOGIN_CREDENTIALS")
    /// A wrong password, or an account without one, when email enumeration protection is off.
    public static let invalidPassword = AuthError(
        "INVALID_PASSWORD", detail: "The password is invalid or the user does not have a password.")
    public static let userDisabled = AuthError("USER_DISABLED")
    public static let userNotFound = AuthError("USER_NOT_FOUND")
    public static let invalidIDToken = AuthError("INVALID_ID_TOKEN")
    public static let tokenExpired = AuthError("TOKEN_EXPIRED")
    public static let invalidRefreshToken = AuthError("INVALID_REFRESH_TOKEN")
    public static let missingRefreshToken = AuthError("MISSING_REFRESH_TOKEN")
    public static let invalidGrantType = AuthError("INVALID_GRANT_TYPE")
    public static let invalidCustomToken = AuthError("INVALID_CUSTOM_TOKEN")
    public static let duplicateLocalID = AuthError("DUPLICATE_LOCAL_ID")
    public static let tooManyAttempts = AuthError(
        "TOO_MANY_ATTEMPTS_TRY_LATER",
        detail: "Access to this account has been temporarily disabled due to many failed login attempts. Try again later.")
    /// Firebase's answer when a client asks for too much (sign-ups from one address), or the
    /// server has too much to do to take the request now.
    public static let tooManyRequests = AuthError(
        "TOO_MANY_ATTEMPTS_TRY_LATER",
        detail: "We have blocked all requests from this device due to unusual activity. Try again later.")
    public static let insufficientPermission = AuthError("INSUFFICIENT_PERMISSION")
    public static let credentialTooOld = AuthError("CREDENTIAL_TOO_OLD_LOGIN_AGAIN")
    public static let phoneNumberExists = AuthError("PHONE_NUMBER_EXISTS")
    public static let invalidPhoneNumber = AuthError("INVALID_PHONE_NUMBER")
    public static let federatedUserIDAlreadyLinked = AuthError("FEDERATED_USER_ID_ALREADY_LINKED")
    public static let invalidOOBCode = AuthError("INVALID_OOB_CODE")
    public static let expiredOOBCode = AuthError("EXPIRED_OOB_CODE")
    public static let emailNotFound = AuthError("EMAIL_NOT_FOUND")
    public static let configurationNotFound = AuthError("CONFIGURATION_NOT_FOUND")

    /// A request that is malformed in some other way.
    public static func invalidArgument(_ detail: String) -> AuthError {
        AuthError("INVALID_ARGUMENT", detail: detail)
    }
}
