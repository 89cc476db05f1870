import Crypto
import Foundation
import HearthCore
import Logging

/// Sign-in with identity providers, as Firebase Auth does it: `accounts:createAuthUri` starts
/// a sign-in (a state, a nonce and a PKCE verifier kept under a one-time session ID), and
/// `accounts:signInWithIdp` finishes it with the provider's redirect, or with a token the
/// client already holds.
///
/// Accounts link by verified email as Firebase does by default: a provider that vouches for
/// an address signs in to the account that has it (and an unverified password on that
/// account is dropped, so whoever registered the address first cannot keep a way in); one
/// that does not vouch for it gets `needConfirmation` instead of a session.
extension AuthService {
    /// How long a begun sign-in may take (milliseconds).
    static let pendingSignInLifetime: Int64 = 10 * 60 * 1000

    /// A sign-in sent to a provider.
    public struct StartedSignIn: Sendable {
        /// Where to send the user.
        public var authURI: String
        /// Given back with the provider's redirect to `accounts:signInWithIdp`.
        public var sessionID: String
    }

    /// Starts a sign-in with `providerID`, coming back to `continueURI`.
    /// - Parameter client: the asking client's address, for its hourly allowance.
    public func startSignIn(
        providerID: String?, continueURI: String?, scopes: [String] = [], customParameters: [(String, String)] = [],
        client: String? = nil
    ) async throws(AuthError) -> StartedSignIn {
        guard let federation else { throw AuthError("OPERATION_NOT_ALLOWED", detail: "this server does not sign in with providers") }
        try countClientRequest(client)
        let config = try await enabledProvider(providerID)
        // The provider sends the user back to it with the code in the query: no fragment.
        guard let continueURI, !continueURI.contains("#") else { throw AuthError("INVALID_CONTINUE_URI") }
        _ = try checkedContinueURL(continueURI, invalid: AuthError("INVALID_CONTINUE_URI"))
        let redirectURI = continueURI.split(separator: "?", maxSplits: 1).first.map(String.init) ?? continueURI
        let state = Self.randomToken()
        let nonce = Self.randomToken()
        let verifier = Self.randomToken() + Self.randomToken()
        let sessionID = Self.randomToken()
        let authURI = try await federation.authorizationURL(
            config, redirectURI: redirectURI, state: state, nonce: nonce, codeVerifier: verifier, scopes: scopes,
            customParameters: customParameters)
        let now = clock()
        let pending = PendingSignIn(
            providerID: config.id, state: state, nonce: nonce, codeVerifier: verifier, redirectURI: redirectURI,
            expiresAt: now + Self.pendingSignInLifetime)
        let digest = Self.digest(sessionID)
        try await withStore { try await store.addPendingSignIn(digest: digest, pending, now: now) }
        return StartedSignIn(authURI: authURI, sessionID: sessionID)
    }

    /// How an app finishes a sign-in with a provider.
    public enum ProviderCredential: Sendable {
        /// The provider's redirect (`requestUri`, with `code` and `state`) and the session ID
        /// `startSignIn` gave.
        case redirect(requestURI: String, sessionID: String?)
        /// A token the app already holds (`postBody`: `id_token` for OpenID providers,
        /// `access_token` for GitHub), with the nonce the app asked for, if any.
        case token(providerID: String, idToken: String?, accessToken: String?, nonce: String?)
    }

    /// The end of a provider sign-in: a session, or (`needConfirmation`) the account that
    /// holds the provider's unverified address, which must sign in another way first.
    public struct FederatedSignIn: Sendable {
        public var profile: FederatedProfile
        public var session: Session?
        public var needConfirmation: Bool
    }

    /// Finishes a sign-in; with `idToken`, links the provider to that signed-in account
    /// instead (an anonymous account keeps its uid and data). Linking to an account that has
    /// a way in needs a recent sign-in, checked before the provider is asked.
    /// In emulator mode a fake credential (``emulatorProfile(_:)``) signs in with no provider.
    public func finishSignIn(_ credential: ProviderCredential, linkingTo idToken: String? = nil) async throws(AuthError) -> FederatedSignIn {
        if let fake = try await emulatorProfile(credential) {
            if let idToken { _ = try await linkableUser(idToken: idToken) }
            return try await signIn(fake, linkingTo: idToken)
        }
        guard let federation else { throw AuthError("OPERATION_NOT_ALLOWED", detail: "this server does not sign in with providers") }
        if let idToken { _ = try await linkableUser(idToken: idToken) }
        let profile: FederatedProfile
        switch credential {
        case .redirect(let requestURI, let sessionID):
            guard let sessionID, !sessionID.isEmpty else { throw AuthError("MISSING_SESSION_ID") }
            let digest = Self.digest(sessionID)
            let now = clock()
            guard let pending = try await withStore({ try await store.takePendingSignIn(digest: digest, now: now) }) else {
                throw AuthError("INVALID_IDP_RESPONSE", detail: "the sign-in session is unknown, already used or expired")
            }
            let returned = try Self.redirectParameters(requestURI, expecting: pending.redirectURI)
            if let error = returned["error"] {
                throw error == "access_denied"
                    ? AuthError("USER_CANCELLED", detail: "the user did not allow the sign-in")
                    : IdentityProviderClient.idpError("the provider answered \(error)")
            }
            guard let state = returned["state"], Self.sameSecret(state, pending.state) else {
                throw IdentityProviderClient.idpError("the state does not match this sign-in")
            }
            guard let code = returned["code"], !code.isEmpty else { throw IdentityProviderClient.idpError("the provider gave no code") }
            let config = try await enabledProvider(pending.providerID)
            profile = try await federation.exchange(
                config, code: code, redirectURI: pending.redirectURI, codeVerifier: pending.codeVerifier, nonce: pending.nonce)
        case .token(let providerID, let idToken, let accessToken, let nonce):
            let config = try await enabledProvider(providerID)
            if let idToken, config.issuer != nil, config.id != "github.com" {
                profile = try await federation.verifiedIDToken(config, idToken: idToken, nonce: .raw(nonce))
            } else if let accessToken, config.id == "github.com" {
                profile = try await federation.gitHubProfile(config, accessToken: accessToken)
            } else {
                throw AuthError("INVALID_CREDENTIAL_OR_PROVIDER_ID", detail: "postBody needs an id_token (OpenID) or access_token (GitHub)")
            }
        }
        return try await signIn(profile, linkingTo: idToken)
    }

    private func signIn(_ profile: FederatedProfile, linkingTo idToken: String?) async throws(AuthError) -> FederatedSignIn {
        let now = clock()
        if let idToken { return try await link(profile, to: idToken, now: now) }
        if let owner = try await withStore({ try await store.user(providerID: profile.providerID, rawID: profile.rawID) }) {
            let user = try await withStore {
                try await store.modify(uid: owner.uid) { user in
                    guard !user.disabled else { throw AuthError.userDisabled }
                    if let index = user.identities.firstIndex(where: { $0.providerID == profile.providerID && $0.rawID == profile.rawID }) {
                        user.identities[index] = profile.identity
                    }
                    user.lastLoginAt = now
                }
            }
            return try await federatedSession(user, profile: profile, isNewUser: false)
        }
        if let email = profile.email, let holder = try await withStore({ try await store.user(email: email) }) {
            // Only a provider that vouches for the address may sign in to the account that has it;
            // and not one whose other identity at the same provider is already linked there.
            guard profile.emailVerified, !holder.identities.contains(where: { $0.providerID == profile.providerID }) else {
                return FederatedSignIn(profile: profile, session: nil, needConfirmation: true)
            }
            let user = try await withStore {
                let (linked, claimed) = try await store.modify(uid: holder.uid) { user -> Bool in
                    guard !user.disabled else { throw AuthError.userDisabled }
                    guard user.email == email, !user.identities.contains(where: { $0.providerID == profile.providerID }) else {
                        throw AuthError("INVALID_IDP_RESPONSE", detail: "the account changed during the sign-in; try again")
                    }
                    let claimed = Self.claimUnverifiedAccount(&user, now: now)
                    user.emailVerified = true
                    user.identities.append(profile.identity)
                    if user.displayName == nil { user.displayName = profile.displayName }
                    if user.photoURL == nil { user.photoURL = profile.photoURL }
                    user.lastLoginAt = now
                    return claimed
                }
                if claimed { try await store.revokeRefreshTokens(uid: linked.uid, now: now) }
                return linked
            }
            logger.info("provider linked by verified email", metadata: ["uid": "\(user.uid)", "provider": "\(profile.providerID)"])
            return try await federatedSession(user, profile: profile, isNewUser: false)
        }
        var user = UserRecord(
            uid: Self.newUID(), email: profile.email, emailVerified: profile.email != nil && profile.emailVerified,
            displayName: profile.displayName, photoURL: profile.photoURL, provider: profile.providerID, createdAt: now,
            lastLoginAt: now, validSince: now / 1000)
        user.identities = [profile.identity]
        try await beforeCreate(&user, method: profile.providerID, federated: profile)
        let created = user
        try await withStore { try await store.insert(created) }
        logger.info("account created", metadata: ["uid": "\(user.uid)", "provider": "\(profile.providerID)"])
        return try await federatedSession(user, profile: profile, isNewUser: true)
    }

    /// The session of a provider's sign-in, once the `beforeSignIn` function let it in.
    private func federatedSession(_ user: UserRecord, profile: FederatedProfile, isNewUser: Bool) async throws(AuthError) -> FederatedSignIn {
        guard !user.disabled else { throw .userDisabled }
        let (admitted, sessionClaims) = try await beforeSignIn(user, method: profile.providerID, federated: profile)
        let session = try await session(for: admitted, provider: profile.providerID, isNewUser: isNewUser, sessionClaims: sessionClaims)
        return FederatedSignIn(profile: profile, session: session, needConfirmation: false)
    }

    /// The account `idToken` speaks for, when a new way in may be linked to it: a token taken
    /// from a page must not become a lasting way into an account that has one, so its sign-in
    /// must be recent (an anonymous account may gain one at any time).
    private func linkableUser(idToken: String) async throws(AuthError) -> UserRecord {
        let (verified, claims) = try await verifiedUser(idToken: idToken)
        if Self.hasCredential(verified) { try checkRecentSignIn(claims) }
        return verified
    }

    /// Links the provider to the account `idToken` speaks for (an anonymous one keeps its uid).
    private func link(_ profile: FederatedProfile, to idToken: String, now: Int64) async throws(AuthError) -> FederatedSignIn {
        // Checked again: the provider may have taken a while.
        let verified = try await linkableUser(idToken: idToken)
        if let owner = try await withStore({ try await store.user(providerID: profile.providerID, rawID: profile.rawID) }),
            owner.uid != verified.uid
        {
            throw .federatedUserIDAlreadyLinked
        }
        if let email = profile.email, let holder = try await withStore({ try await store.user(email: email) }), holder.uid != verified.uid {
            throw .emailExists
        }
        let user = try await withStore {
            try await store.modify(uid: verified.uid) { user in
                guard !user.disabled else { throw AuthError.userDisabled }
                if let linked = user.identities.first(where: { $0.providerID == profile.providerID }) {
                    // One identity per provider, as Firebase allows; the same one again is a no-op.
                    guard linked.rawID == profile.rawID else {
                        throw AuthError("PROVIDER_ALREADY_LINKED", detail: "User can only be linked to one identity for the given provider.")
                    }
                }
                user.identities.removeAll { $0.providerID == profile.providerID }
                user.identities.append(profile.identity)
                // The address becomes the account's (the store refuses one another account has).
                if user.email == nil, let email = profile.email, profile.emailVerified {
                    user.email = email
                    user.emailVerified = true
                }
                if user.displayName == nil { user.displayName = profile.displayName }
                if user.photoURL == nil { user.photoURL = profile.photoURL }
                if user.provider == "anonymous" || user.provider == "custom" { user.provider = profile.providerID }
                user.lastLoginAt = now
            }
        }
        logger.info("provider linked", metadata: ["uid": "\(user.uid)", "provider": "\(profile.providerID)"])
        return FederatedSignIn(profile: profile, session: try await session(for: user, provider: profile.providerID, isNewUser: false), needConfirmation: false)
    }

    /// True when the account has a way to sign in again (so changes to it need a recent sign-in).
    static func hasCredential(_ user: UserRecord) -> Bool {
        user.provider != "anonymous" || user.email != nil || user.passwordHash != nil || !user.identities.isEmpty
    }

    /// Someone proved they hold `user`'s address, which was never verified: whoever registered
    /// it may not be them, so every way in they may have added goes (password, phone, other
    /// providers, email-link sign-in) and every session ends. Answers whether anything was taken.
    static func claimUnverifiedAccount(_ user: inout UserRecord, now: Int64) -> Bool {
        guard !user.emailVerified else { return false }
        user.passwordHash = nil
        user.passwordUpdatedAt = nil
        user.phoneNumber = nil
        user.identities = []
        user.emailLinkSignIn = false
        user.validSince = now / 1000
        return true
    }

    /// The sign-in methods an address can use (`accounts:createAuthUri` with an `identifier`).
    ///
    /// - Returns: nil under email enumeration protection (for anyone but an admin), as
    ///   Firebase then leaves the answer's `registered` and methods out.
    public func signInMethods(
        email address: String?, isAdmin: Bool = false
    ) async throws(AuthError) -> (registered: Bool, methods: [String], providers: [String])? {
        let email = try checkedEmail(address)
        if policy.emailEnumerationProtection, !isAdmin { return nil }
        guard let user = try await withStore({ try await store.user(email: email) }) else { return (false, [], []) }
        var methods: [String] = []
        var providers: [String] = []
        if user.emailLinkSignIn { methods.append("emailLink") }
        if user.passwordHash != nil { methods.append("password") }
        if user.passwordHash != nil || user.emailLinkSignIn { providers.append("password") }
        for identity in user.identities where !providers.contains(identity.providerID) {
            methods.append(identity.providerID)
            providers.append(identity.providerID)
        }
        return (true, methods, providers)
    }

    private func enabledProvider(_ providerID: String?) async throws(AuthError) -> ProviderConfig {
        guard let providerID, !providerID.isEmpty else { throw AuthError("MISSING_PROVIDER_ID") }
        guard let config = try await providerConfig(id: providerID), config.kind != .saml else {
            throw AuthError("INVALID_PROVIDER_ID", detail: "Provider Id is not supported.")
        }
        guard config.enabled else { throw AuthError("OPERATION_NOT_ALLOWED", detail: "The identity provider configuration is disabled.") }
        return config
    }

    /// The query (and fragment) parameters of the provider's redirect, which must come back to
    /// the address the sign-in was started for, as it was written then.
    static func redirectParameters(_ requestURI: String, expecting redirectURI: String) throws(AuthError) -> [String: String] {
        guard BrowserURL(requestURI) != nil, URLComponents(string: requestURI) != nil else {
            throw IdentityProviderClient.idpError("requestUri is not a URL")
        }
        guard requestURI.prefix(while: { $0 != "?" && $0 != "#" }) == redirectURI else {
            throw IdentityProviderClient.idpError("requestUri is not the address this sign-in was started for")
        }
        return uriParameters(requestURI)
    }

    static func randomToken() -> String {
        TokenIssuer.base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// Compares two secrets in time that does not depend on where they differ.
    static func sameSecret(_ a: String, _ b: String) -> Bool {
        SymmetricKey(data: Data(SHA256.hash(data: Data(a.utf8)))) == SymmetricKey(data: Data(SHA256.hash(data: Data(b.utf8))))
    }
}
