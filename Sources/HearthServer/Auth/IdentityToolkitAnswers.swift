import Foundation
import HearthAuth
import HearthCore

// The bodies of Identity Toolkit's answers, as Firebase's clients and Admin SDKs read them.
// Optional fields are left out when nil, as Firebase leaves them out; lists Firebase leaves
// out when empty are optional and given as nil then.

/// A user as Firebase's `UserInfo` (what `accounts:lookup` and the Admin SDKs read).
struct UserInfoAnswer: Encodable {
    var localId: String
    var emailVerified: Bool
    var disabled: Bool
    /// Milliseconds, as a string (Google's APIs write int64s so).
    var createdAt: String
    /// Seconds, as a string.
    var validSince: String
    var email: String?
    var displayName: String?
    var photoUrl: String?
    var lastLoginAt: String?
    /// RFC 3339 with milliseconds, as Firebase gives it.
    var lastRefreshAt: String?
    var emailLinkSignin: Bool?
    /// The custom claims, as JSON text.
    var customAttributes: String?
    var phoneNumber: String?
    var passwordUpdatedAt: Int64?
    var providerUserInfo: [ProviderUserInfo]?
    /// Only in an admin's export (`accounts:batchGet`), as Firebase gives them to a service
    /// account allowed to read them (base64; empty for a hash imported with another algorithm).
    var passwordHash: String?
    var salt: String?

    struct ProviderUserInfo: Encodable {
        var providerId: String
        var rawId: String
        var federatedId: String?
        var email: String?
        var displayName: String?
        var photoUrl: String?
        var phoneNumber: String?
    }

    /// Milliseconds since the epoch as RFC 3339 with milliseconds (`2024-05-01T12:00:00.123Z`).
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    init(_ user: UserRecord) {
        localId = user.uid
        emailVerified = user.emailVerified
        disabled = user.disabled
        createdAt = String(user.createdAt)
        validSince = String(user.validSince)
        email = user.email
        displayName = user.displayName
        photoUrl = user.photoURL
        lastLoginAt = user.lastLoginAt.map { String($0) }
        lastRefreshAt = user.lastRefreshAt.map(Self.timestamp)
        emailLinkSignin = user.emailLinkSignIn ? true : nil
        customAttributes = user.customClaims.children != nil ? JSONWriter.string(user.customClaims) : nil
        phoneNumber = user.phoneNumber
        passwordUpdatedAt = user.passwordUpdatedAt
        let providers = user.providerEntries.map { entry in
            ProviderUserInfo(
                providerId: entry.providerID, rawId: entry.rawID, federatedId: entry.phoneNumber == nil ? entry.rawID : nil,
                email: entry.email, displayName: entry.displayName, photoUrl: entry.photoURL, phoneNumber: entry.phoneNumber)
        }
        providerUserInfo = providers.isEmpty ? nil : providers
    }

    /// The user with their password hash and salt, for an admin's export.
    static func exported(_ user: UserRecord) -> UserInfoAnswer {
        var answer = UserInfoAnswer(user)
        if let stored = user.passwordHash { (answer.passwordHash, answer.salt) = PasswordHasher.exported(stored) }
        return answer
    }
}

/// A signed-in session: sign-up, sign-in by password, custom token or email link.
struct SessionAnswer: Encodable {
    var kind: String
    var localId: String
    var idToken: String
    var refreshToken: String
    /// Seconds, as a string.
    var expiresIn: String
    var email: String?
    var registered: Bool?
    var displayName: String?
    var isNewUser: Bool?

    init(_ session: AuthService.Session, kind: String, withEmail: Bool = true) {
        self.kind = kind
        localId = session.user.uid
        idToken = session.idToken
        refreshToken = session.refreshToken
        expiresIn = String(session.expiresIn)
        email = withEmail ? session.user.email : nil
    }
}

/// A user with the answer's `kind` beside its fields (admin create and update, a profile
/// update), and the new session's tokens when the change issued one.
struct UserAnswer: Encodable {
    var kind: String
    var user: UserInfoAnswer
    var session: AuthService.Session?

    private enum Keys: String, CodingKey {
        case kind, idToken, refreshToken, expiresIn
    }

    func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(kind, forKey: .kind)
        if let session {
            try container.encode(session.idToken, forKey: .idToken)
            try container.encode(session.refreshToken, forKey: .refreshToken)
            try container.encode(String(session.expiresIn), forKey: .expiresIn)
        }
    }
}

/// An answer that is only its `kind` (a deletion, a sign-out).
struct KindAnswer: Encodable {
    var kind: String
}

/// `{}`: an answer with nothing to say.
struct EmptyAnswer: Encodable {}

/// `accounts:lookup`.
struct AccountInfoAnswer: Encodable {
    var kind = "identitytoolkit#GetAccountInfoResponse"
    /// Left out when nothing matched, as Firebase does.
    var users: [UserInfoAnswer]?
}

/// The token endpoint's answer (snake case, as Google's OAuth endpoints write).
struct TokenAnswer: Encodable {
    var accessToken: String
    var expiresIn: String
    var tokenType = "Bearer"
    var refreshToken: String
    var idToken: String
    var userId: String
    var projectId: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", expiresIn = "expires_in", tokenType = "token_type"
        case refreshToken = "refresh_token", idToken = "id_token", userId = "user_id", projectId = "project_id"
    }
}

/// `accounts:batchGet`.
struct DownloadAccountAnswer: Encodable {
    var kind = "identitytoolkit#DownloadAccountResponse"
    var users: [UserInfoAnswer]?
    var nextPageToken: String?
}

/// `accounts:batchDelete`.
struct BatchDeleteAnswer: Encodable {
    struct Failure: Encodable {
        var index: Int
        var localId: String
        var message: String
    }

    var kind = "identitytoolkit#BatchDeleteAccountsResponse"
    var errors: [Failure]?
}

/// `accounts:batchCreate`: the users refused, by their place in the request.
struct UploadAccountAnswer: Encodable {
    struct Failure: Encodable {
        var index: Int
        var message: String
    }

    var kind = "identitytoolkit#UploadAccountResponse"
    var error: [Failure]?
}

/// `accounts:query`.
struct QueryAnswer: Encodable {
    var recordsCount: String
    var userInfo: [UserInfoAnswer]?
}

/// `projects/<project>:createSessionCookie`.
struct SessionCookieAnswer: Encodable {
    var sessionCookie: String
}

/// Hearth's own `/__/auth/providers`: the providers a sign-in page offers.
struct ProvidersAnswer: Encodable {
    struct Provider: Encodable {
        var providerId: String
        var displayName: String
    }

    var providers: [Provider]
}

/// The emulator's `GET /emulator/auth/accounts?providerId=…` (Hearth's own): the identities at
/// a provider that accounts hold, which the emulator's sign-in page offers again.
struct EmulatorAccountsAnswer: Encodable {
    struct Account: Encodable {
        var rawId: String
        var email: String?
        var displayName: String?
        var photoUrl: String?
    }

    var accounts: [Account]
}

/// `accounts:createAuthUri`: the sign-in methods of an address, or where to send the user
/// to sign in with a provider.
struct CreateAuthUriAnswer: Encodable {
    var kind = "identitytoolkit#CreateAuthUriResponse"
    var registered: Bool?
    var allProviders: [String]?
    var signinMethods: [String]?
    var authUri: String?
    var providerId: String?
    var sessionId: String?
}

/// `accounts:signInWithIdp`.
struct VerifyAssertionAnswer: Encodable {
    var kind = "identitytoolkit#VerifyAssertionResponse"
    var providerId: String
    var federatedId: String
    var emailVerified: Bool
    var email: String?
    var displayName: String?
    var photoUrl: String?
    /// The provider's profile, as JSON text.
    var rawUserInfo: String?
    var oauthIdToken: String?
    var oauthAccessToken: String?
    /// Set when the address belongs to another account: the user must sign in to it first.
    var needConfirmation: Bool?
    var localId: String?
    var idToken: String?
    var refreshToken: String?
    var expiresIn: String?
    var isNewUser: Bool?
}

/// `accounts:sendOobCode`; the code and link only when an admin asked for them back.
struct OobConfirmationAnswer: Encodable {
    var kind = "identitytoolkit#GetOobConfirmationCodeResponse"
    var email: String
    var oobCode: String?
    var oobLink: String?
}

/// `accounts:resetPassword`, with or without a new password (the latter checks a code).
struct ResetPasswordAnswer: Encodable {
    var kind = "identitytoolkit#ResetPasswordResponse"
    var requestType: String
    var email: String?
    var newEmail: String?
}

/// `accounts:update` with an `oobCode`: the account the code acted on.
struct AppliedCodeAnswer: Encodable {
    var kind = "identitytoolkit#SetAccountInfoResponse"
    var localId: String
    var emailVerified: Bool
    var email: String?
    var displayName: String?
}

/// The emulator's `…/oobCodes`.
struct OobCodesAnswer: Encodable {
    struct Code: Encodable {
        var email: String
        var oobCode: String
        var oobLink: String
        var requestType: String
        var newEmail: String?
    }

    var oobCodes: [Code]
}

/// The web session's answer: a fresh ID token for the session in the cookie.
struct WebSessionAnswer: Encodable {
    var idToken: String
    var expiresIn: String
    var localId: String
}

/// v3's `getProjectConfig` and v1's `GET projects`: the project and its authorized domains.
struct ProjectConfigAnswer: Encodable {
    var projectId: String
    var authorizedDomains: [String]
}

/// v3's `signOutUser`: the account signed out.
struct SignOutUserAnswer: Encodable {
    var localId: String
}
