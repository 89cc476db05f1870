import Crypto
import Foundation
import HearthCore
import Logging
import NIOPosix
import Synchronization

/// The account service: sign-up, sign-in (password, anonymous, custom token), token refresh,
/// profile and password changes, deletion and sign-out for users; and account management for
/// admins. Every refusal is an ``AuthError`` with Firebase's code.
///
/// Accounts live in an ``AccountStorage``: ``AccountStore`` (SQLite) for one node, PostgreSQL
/// shared by every node of a cluster. Password hashing runs on a thread pool of its own, at most
/// ``Policy/maxConcurrentHashes`` at once (sign-ins first), and store work on the store's own,
/// never blocking the cooperative pool or NIO's event loops. Nothing here logs a password, a
/// token or a hash.
///
/// Limits are counted in this process (each node of a cluster counts its own).
public final class AuthService: Sendable {
    /// Limits and policy.
    public struct Policy: Sendable {
        /// Failed sign-ins one client address may make at one account in a window; beyond,
        /// that address gets `TOO_MANY_ATTEMPTS_TRY_LATER` for that account until the window
        /// ends. Other addresses are not affected: failures never lock an account for everyone.
        public var failuresPerAccount = 10
        /// Failed sign-ins one client address may make in a window, at any accounts.
        public var failuresPerAddress = 100
        /// Failed sign-ins at one account from all addresses in a window beyond which the
        /// account is under attack (guesses from many addresses): each address then gets one
        /// failure at it per window rather than ``failuresPerAccount``. The account stays
        /// open: a right password from an address that has not failed at it still signs in.
        public var failuresPerAccountFromAllAddresses = 100
        /// The rate-limit window in milliseconds.
        public var failureWindow: Int64 = 15 * 60 * 1000
        /// Sign-ups (`accounts:signUp`, anonymous or with an email) one client address may
        /// make at once; then ``signUpsPerAddressPerHour``. Admins and emulator mode are not
        /// limited.
        public var signUpBurstPerAddress = 50
        /// Sign-ups one client address may make per hour once its burst is used (Firebase
        /// allows 100 new accounts per hour per address).
        public var signUpsPerAddressPerHour = 100
        /// Password hashes computed at once (sign-ups, sign-ins, password changes), each taking
        /// a core for tens of milliseconds: by default one per core. One place is kept for
        /// sign-ins (when there are two or more), so sign-ups cannot make them wait.
        public var maxConcurrentHashes = ProcessInfo.processInfo.activeProcessorCount
        /// Hashes that may wait for their turn beyond those; more are refused with
        /// `TOO_MANY_ATTEMPTS_TRY_LATER` at once rather than pile up. Sign-ins go first.
        public var maxWaitingHashes = 64
        public var minimumPasswordLength = 6
        /// Emulator mode: unsigned custom tokens are accepted, as the Firebase tools make them.
        public var emulator = false
        /// How recent a sign-in must be (seconds) for a user to change their email or password
        /// or delete their account with an ID token: older ones get
        /// `CREDENTIAL_TOO_OLD_LOGIN_AGAIN`, as Firebase answers. A token stolen from a page
        /// cannot then be turned into a new password and a lasting session.
        public var recentSignInSeconds: Int64 = 300
        /// Emails one address may be sent in an hour (resets, verifications, sign-in links).
        public var emailsPerAddressPerHour = 5
        /// Emails and provider sign-ins one client address may ask for in an hour.
        public var requestsPerClientPerHour = 100
        /// Email enumeration protection, on by default as in Firebase projects made since
        /// September 2023: no answer to someone without admin rights tells whether an address
        /// has an account. A failed password sign-in is `INVALID_LOGIN_CREDENTIALS` whatever
        /// went wrong; `createAuthUri` with an address lists no sign-in methods; an email-link
        /// request for a disabled account, and an email change to an address that is taken,
        /// are answered as any other and send nothing. Off, as in older projects: an unknown
        /// address is `EMAIL_NOT_FOUND`, a wrong password `INVALID_PASSWORD`, a password reset
        /// for an unknown address `EMAIL_NOT_FOUND`, and the others say `USER_DISABLED` and
        /// `EMAIL_EXISTS`.
        public var emailEnumerationProtection = true
        /// The hosts an emailed link may be made to open on (`linkDomain` in an action code
        /// request, Firebase's Hosting link domain): the hosts this server answers on. Checked in
        /// emulator mode too, as Firebase's emulator checks it.
        public var linkDomains: Set<String> = ["localhost", "127.0.0.1"]
        /// The host names a sign-in may return to and emailed links may continue to (Firebase's
        /// authorized domains); nil allows any (emulator mode).
        public var authorizedDomains: Set<String>?
        /// How long a sign-up or sign-in waits for a blocking function (Firebase's 7 seconds);
        /// then it is refused.
        public var blockingFunctionTimeout: Duration = .seconds(7)

        public init() {}
    }

    /// A signed-in user and their tokens.
    public struct Session: Sendable {
        public let user: UserRecord
        public let idToken: String
        public let refreshToken: String
        /// Seconds until the ID token expires.
        public let expiresIn: Int64
        public let isNewUser: Bool
    }

    public let store: any AccountStorage
    /// Whether an account's ID tokens are still good (the database asks it); told of every
    /// account this service disables, deletes or ends the sessions of.
    public let gate: AccountGate
    public let issuer: TokenIssuer
    public let policy: Policy
    /// How emails are sent and what action links point to.
    public let email: EmailDelivery
    /// Talks to identity providers; nil when the server makes no outbound requests.
    public let federation: IdentityProviderClient?
    /// The blocking functions asked before accounts are made and sign in; nil for none.
    public let blockingHooks: (any AccountBlockingHooks)?
    let hasher: PasswordHasher
    let clock: @Sendable () -> Int64
    /// Failures per client address and account.
    private let pairFailures: RateLimiter
    /// Failures per account from all addresses (beyond its limit, the account is under attack).
    private let accountFailures: RateLimiter
    private let addressFailures: RateLimiter
    /// Sign-ups per client address.
    private let signUps: BurstLimiter
    /// Password hashes running and waiting.
    let hashGate: ConcurrencyGate
    /// Emails sent per address in the current hour (each send counts as a "failure").
    let emailsSent: RateLimiter
    /// Emails and provider sign-ins asked for per client address (each counts as a "failure").
    let clientRequests: RateLimiter
    /// Emails being sent in the background: beyond ``maxBackgroundEmails`` more are dropped.
    let backgroundEmails = Mutex(0)
    static let maxBackgroundEmails = 32
    let logger: Logger
    /// A hash of a random password at this service's cost, checked when an email is unknown.
    private let decoyHash: String

    /// - Parameter clock: milliseconds since the epoch.
    public init(
        store: any AccountStorage, issuer: TokenIssuer, policy: Policy = Policy(), hasher: PasswordHasher = PasswordHasher(),
        email: EmailDelivery? = nil, http: (any HTTPFetching)? = nil, blockingHooks: (any AccountBlockingHooks)? = nil,
        clock: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.store = store
        gate = AccountGate(clock: clock) { uid in try await store.user(uid: uid) }
        self.blockingHooks = blockingHooks
        federation = http.map { IdentityProviderClient(http: $0, clock: clock) }
        self.email = email ?? EmailDelivery(
            mailer: nil, sender: "noreply@localhost", appName: issuer.projectID, actionURL: "http://localhost/__/auth/action")
        self.issuer = issuer
        self.policy = policy
        self.hasher = hasher
        self.clock = clock
        self.logger = logger
        pairFailures = RateLimiter(limit: policy.failuresPerAccount, window: policy.failureWindow, clock: clock)
        accountFailures = RateLimiter(limit: policy.failuresPerAccountFromAllAddresses, window: policy.failureWindow, clock: clock)
        signUps = BurstLimiter(burst: policy.signUpBurstPerAddress, perHour: policy.signUpsPerAddressPerHour, clock: clock)
        hashGate = ConcurrencyGate(maxRunning: policy.maxConcurrentHashes, maxWaiting: policy.maxWaitingHashes)
        emailsSent = RateLimiter(limit: policy.emailsPerAddressPerHour, window: 3_600_000, clock: clock)
        clientRequests = RateLimiter(limit: policy.requestsPerClientPerHour, window: 3_600_000, clock: clock)
        addressFailures = RateLimiter(limit: policy.failuresPerAddress, window: policy.failureWindow, clock: clock)
        decoyHash = (try? hasher.hash(UUID().uuidString)) ?? ""
    }

    var nowSeconds: Int64 { clock() / 1000 }

    // MARK: - Signing up and in

    /// Makes an account with an email and password, or an anonymous one when both are nil.
    /// - Parameter client: the client's address, for its sign-up allowance
    ///   (``Policy/signUpsPerAddressPerHour``); nil for an admin, who is not limited.
    public func signUp(
        email: String?, password: String?, displayName: String? = nil, client: String? = nil
    ) async throws(AuthError) -> Session {
        var credentials: (email: String, password: String)?
        if email != nil || password != nil { credentials = (try checkedEmail(email), try checkedPassword(password)) }
        try countSignUp(from: client)
        let now = clock()
        var user = UserRecord(uid: Self.newUID(), provider: "anonymous", createdAt: now, lastLoginAt: now, validSince: now / 1000)
        user.displayName = displayName
        if let credentials {
            user.email = credentials.email
            user.provider = "password"
            user.passwordHash = try await hashed(credentials.password)
            // Admins' and anonymous sign-ups are not asked about (as in Firebase).
            if client != nil { try await beforeCreate(&user, method: "password") }
        }
        let prepared = user
        try await withStore { try await store.insert(prepared) }
        logger.info("account created", metadata: ["uid": "\(user.uid)", "provider": "\(user.provider)"])
        var sessionClaims = Node.null
        if credentials != nil, client != nil {
            (user, sessionClaims) = try await beforeSignIn(user, method: "password")
        }
        guard !user.disabled else { throw .userDisabled }
        return try await session(for: user, provider: user.provider, isNewUser: true, sessionClaims: sessionClaims)
    }

    /// Signs in with an email and password.
    ///
    /// Failures are counted against the client's address, at that account
    /// (``Policy/failuresPerAccount``) and at all (``Policy/failuresPerAddress``), so that
    /// whoever guesses is stopped and the account's owner, elsewhere, is not. Failures at an
    /// account from many addresses (``Policy/failuresPerAccountFromAllAddresses``) leave each
    /// address one failure there per window, and never close the account.
    /// - Parameter client: the client's address, for rate limiting.
    public func signIn(email: String?, password: String?, client: String) async throws(AuthError) -> Session {
        guard let email, !email.isEmpty else { throw .invalidEmail }
        guard let password, !password.isEmpty else { throw .missingPassword }
        let account = email.lowercased()
        let address = ClientAddress.limitKey(client)
        let addressKey = "address:" + address
        // An address (a header value) holds no newline: the first one ends it.
        let pairKey = "pair:" + address + "\n" + account
        let accountKey = "account:" + account
        try await admit(addressKey, to: addressFailures)
        do {
            let underAttack = accountFailures.isBlocked(accountKey)
            try await admit(pairKey, to: pairFailures, limit: underAttack ? 1 : nil)
        } catch {
            addressFailures.finish(addressKey, failed: false)
            throw error
        }
        var failed = false
        defer {
            pairFailures.finish(pairKey, failed: failed)
            addressFailures.finish(addressKey, failed: failed)
            if failed { accountFailures.recordFailure(accountKey) }
        }
        let found = try await withStore { try await store.user(email: email) }
        // The hash is checked even for an unknown email, so timing does not tell which emails exist.
        let stored = found?.passwordHash ?? decoyHash
        // A sign-in goes ahead of sign-ups waiting to hash; refused when even that queue is
        // full, which is not a failure of the password.
        let matches = try await hashing(.urgent) { [hasher] in hasher.verify(password, against: stored) }
        guard let user = found, user.passwordHash != nil, matches else {
            failed = true
            throw failedSignIn(accountExists: found != nil)
        }
        pairFailures.reset(pairKey)
        guard !user.disabled else { throw .userDisabled }
        // An imported or older hash becomes Hearth's own now that the password is known (or at
        // a later sign-in, when the server is too busy now).
        let rehashed = hasher.needsRehash(stored) ? try? await hashing(.urgent) { [hasher] in try hasher.hash(password) } : nil
        let now = clock()
        let signedIn = try await withStore {
            try await store.modify(uid: user.uid) { current in
                // Changed meanwhile (a reset, disabling, a revocation): that change stands.
                guard current.passwordHash == stored else { throw self.failedSignIn(accountExists: true) }
                guard !current.disabled else { throw AuthError.userDisabled }
                current.lastLoginAt = now
                if let rehashed { current.passwordHash = rehashed }
            }
        }
        let (admitted, sessionClaims) = try await beforeSignIn(signedIn, method: "password")
        return try await session(for: admitted, provider: "password", isNewUser: false, sessionClaims: sessionClaims)
    }

    /// What a failed password sign-in answers (see ``Policy/emailEnumerationProtection``).
    func failedSignIn(accountExists: Bool) -> AuthError {
        guard !policy.emailEnumerationProtection else { return .invalidLoginCredentials }
        return accountExists ? .invalidPassword : .emailNotFound
    }

    /// Waits until `limiter` admits an attempt for `key`: at once unless attempts in progress
    /// could use up its failures (`limit`, when fewer than the limiter's), then as they finish.
    private func admit(_ key: String, to limiter: RateLimiter, limit: Int? = nil) async throws(AuthError) {
        for _ in 0..<400 {
            switch limiter.admit(key, limit: limit) {
            case .admitted: return
            case .blocked: throw .tooManyAttempts
            case .busy: try? await Task.sleep(for: .milliseconds(5))
            }
        }
        throw .tooManyAttempts
    }

    /// Signs in with a custom token, making the account on first use.
    public func signIn(customToken: String) async throws(AuthError) -> Session {
        // A token signed by a service account's key (an Admin SDK holding its key file) names
        // that key; the server's own key needs no lookup.
        var signer: ServiceAccountKey?
        if let kid = TokenIssuer.keyID(of: customToken), kid != issuer.keyID, kid.utf8.count <= 64 {
            signer = try await withStore { try await store.serviceAccountKey(id: kid) }
        }
        let (uid, claims) = try await issuer.verifyCustomToken(
            customToken, allowUnsigned: policy.emulator, now: nowSeconds, serviceAccount: signer)
        let now = clock()
        var isNew = false
        var user: UserRecord
        if try await withStore({ try await store.user(uid: uid) }) != nil {
            user = try await withStore {
                try await store.modify(uid: uid) { current in
                    guard !current.disabled else { throw AuthError.userDisabled }
                    current.lastLoginAt = now
                }
            }
        } else {
            user = UserRecord(uid: uid, provider: "custom", createdAt: now, lastLoginAt: now, validSince: now / 1000)
            isNew = true
            let created = user
            try await withStore { try await store.insert(created) }
        }
        // Developer claims in the custom token go into this session's ID tokens, refreshed ones
        // included, but not onto the account.
        return try await session(for: user, provider: "custom", isNewUser: isNew, sessionClaims: claims)
    }

    /// A fresh ID token for a refresh token (which stays the same).
    public func refresh(refreshToken: String?) async throws(AuthError) -> Session {
        guard let refreshToken, !refreshToken.isEmpty else { throw .missingRefreshToken }
        let digest = Self.digest(refreshToken)
        guard let session = try await withStore({ try await store.refreshToken(digest: digest) }) else { throw .invalidRefreshToken }
        guard let user = try await withStore({ try await store.user(uid: session.uid) }) else { throw .userNotFound }
        // Ended by a password or email change, or revoked: Firebase's answer, which makes its
        // SDKs sign the user out.
        guard !session.revoked, session.createdAt / 1000 >= user.validSince else { throw .tokenExpired }
        guard !user.disabled else { throw .userDisabled }
        let idToken = try await signedIDToken(
            for: user, provider: session.provider ?? user.provider, authTime: session.createdAt / 1000,
            sessionClaims: session.claims, session: digest)
        // In use now: what retention jobs and `lastRefreshAt` go by.
        let now = clock()
        try await withStore { try await store.recordRefresh(uid: user.uid, at: now) }
        return Session(user: user, idToken: idToken, refreshToken: refreshToken, expiresIn: issuer.idTokenLifetime, isNewUser: false)
    }

    // MARK: - The signed-in user

    /// The account an ID token speaks for; tokens issued before a password change or
    /// sign-out are refused.
    public func user(idToken: String?) async throws(AuthError) -> UserRecord {
        try await verifiedUser(idToken: idToken).user
    }

    /// The account an ID token speaks for, and the token's claims.
    func verifiedUser(idToken: String?) async throws(AuthError) -> (user: UserRecord, claims: Node) {
        guard let idToken, !idToken.isEmpty else { throw .invalidIDToken }
        let claims = try await issuer.verifyIDToken(idToken, now: nowSeconds)
        guard case .string(let uid) = claims.child(ChildKey("sub")),
            let user = try await withStore({ try await store.user(uid: uid) })
        else { throw .userNotFound }
        if let issued = claims.child(ChildKey("iat")).integerValue, issued < user.validSince { throw .tokenExpired }
        guard !user.disabled else { throw .userDisabled }
        return (user, claims)
    }

    /// Throws `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` unless the token's sign-in (`auth_time`) is recent
    /// enough for a sensitive change (see ``Policy/recentSignInSeconds``).
    func checkRecentSignIn(_ claims: Node) throws(AuthError) {
        guard let signedIn = claims.child(ChildKey("auth_time")).integerValue,
            signedIn >= nowSeconds - policy.recentSignInSeconds
        else { throw .credentialTooOld }
    }

    /// A change a user makes to their own account.
    public struct ProfileChange: Sendable {
        public var displayName: String?
        public var photoURL: String?
        public var email: String?
        public var password: String?
        /// `DISPLAY_NAME` and/or `PHOTO_URL`.
        public var deleteAttributes: [String] = []
        /// Sign-in methods to unlink: `password`, `phone`, or a provider ID.
        public var deleteProviders: [String] = []

        public init(
            displayName: String? = nil, photoURL: String? = nil, email: String? = nil, password: String? = nil,
            deleteAttributes: [String] = [], deleteProviders: [String] = []
        ) {
            self.deleteProviders = deleteProviders
            self.displayName = displayName
            self.photoURL = photoURL
            self.email = email
            self.password = password
            self.deleteAttributes = deleteAttributes
        }
    }

    /// Applies a user's change to their own account. A password change revokes every other
    /// session and returns a new one. Linking an email and password to an anonymous account
    /// returns a new one too (its tokens name the new way of signing in), and ends nothing: an
    /// anonymous account's only session is the device linking it, whose open connections must
    /// not be signed out under it while its SDK takes the new tokens.
    public func update(idToken: String?, _ change: ProfileChange) async throws(AuthError) -> (UserRecord, Session?) {
        let (verified, claims) = try await verifiedUser(idToken: idToken)
        // Every change of how the account is signed in to (a password set or changed, an email
        // changed, a sign-in method removed) needs a recent sign-in: a token taken from a page
        // must not become a lasting way in, nor lock the owner out. An anonymous account has
        // no credential to sign in again with: it may gain one at any time.
        let hasCredential = Self.hasCredential(verified)
        let changesSignIn = change.password != nil || change.email != nil || !change.deleteProviders.isEmpty
        if hasCredential, changesSignIn { try checkRecentSignIn(claims) }
        let address = change.email == nil ? nil : try checkedEmail(change.email)
        var newHash: String?
        if change.password != nil {
            let password = try checkedPassword(change.password)
            newHash = try await hashed(password)
        }
        let now = nowSeconds
        let hash = newHash
        // Applied to the account as it is when written, not as it was read above.
        let (user, newSession) = try await withStore {
            let (updated, renewal) = try await store.modify(uid: verified.uid) { user -> (endsSessions: Bool, renews: Bool) in
                var endsSessions = false
                if let name = change.displayName { user.displayName = name }
                if let photo = change.photoURL { user.photoURL = photo }
                if change.deleteAttributes.contains("DISPLAY_NAME") { user.displayName = nil }
                if change.deleteAttributes.contains("PHOTO_URL") { user.photoURL = nil }
                for provider in change.deleteProviders {
                    switch provider {
                    case "password": user.passwordHash = nil
                    case "phone": user.phoneNumber = nil
                    default: user.identities.removeAll { $0.providerID == provider }
                    }
                }
                if let address, address != user.email {
                    // A new address is not verified until its owner says so, and, as a new
                    // password, ends every other session (an anonymous account has none to end).
                    user.emailVerified = false
                    user.email = address
                    if hasCredential {
                        user.validSince = now
                        endsSessions = true
                    }
                }
                if let hash {
                    user.passwordHash = hash
                    user.passwordUpdatedAt = now * 1000
                    if hasCredential {
                        user.validSince = now
                        endsSessions = true
                    }
                }
                let renews = endsSessions || (user.provider == "anonymous" && user.email != nil && user.passwordHash != nil)
                if user.provider == "anonymous", user.email != nil, user.passwordHash != nil { user.provider = "password" }
                return (endsSessions, renews)
            }
            if renewal.endsSessions { try await store.revokeRefreshTokens(uid: updated.uid, now: now * 1000) }
            return (updated, renewal)
        }
        guard newSession.renews else { return (user, nil) }
        // Other devices' tokens stop working now; this one's go on until it uses the new ones.
        if newSession.endsSessions {
            if case .string(let jti) = claims.child(ChildKey("jti")) {
                gate.changed(uid: user.uid, continuing: (jti, user.validSince))
            } else {
                gate.changed(uid: user.uid)
            }
        }
        return (user, try await session(for: user, provider: user.provider, isNewUser: false))
    }

    /// Deletes the account an ID token speaks for.
    public func delete(idToken: String?) async throws(AuthError) {
        let (user, claims) = try await verifiedUser(idToken: idToken)
        if user.provider != "anonymous" { try checkRecentSignIn(claims) }
        _ = try await withStore { try await store.delete(uid: user.uid) }
        gate.changed(uid: user.uid)
        logger.info("account deleted", metadata: ["uid": "\(user.uid)"])
    }

    /// Signs a user out. With the session's `refreshToken`, only that session ends (the device
    /// signing out), as a sign-out does in Firebase's SDKs; without one, the user is signed out
    /// everywhere: every refresh token stops working, and ID tokens issued until now are
    /// refused by the account endpoints.
    public func signOut(idToken: String?, refreshToken: String? = nil) async throws(AuthError) {
        let user = try await user(idToken: idToken)
        guard let refreshToken, !refreshToken.isEmpty else { return try await revokeSessions(uid: user.uid) }
        let digest = Self.digest(refreshToken)
        guard try await withStore({ try await store.revokeRefreshToken(digest: digest, uid: user.uid) }) else {
            throw .invalidRefreshToken
        }
    }

    /// Ends the one session `refreshToken` belongs to: holding the token is proof enough, as it
    /// is for refreshing. Throws `INVALID_REFRESH_TOKEN` when no session has that token.
    public func endSession(refreshToken: String?) async throws(AuthError) {
        guard let refreshToken, !refreshToken.isEmpty else { throw .missingRefreshToken }
        let digest = Self.digest(refreshToken)
        guard let session = try await withStore({ try await store.refreshToken(digest: digest) }),
            try await withStore({ try await store.revokeRefreshToken(digest: digest, uid: session.uid) })
        else { throw .invalidRefreshToken }
    }

    /// Revokes every refresh token of `uid`.
    public func revokeSessions(uid: String) async throws(AuthError) {
        let now = nowSeconds
        try await withStore {
            // Token times are whole seconds, as Firebase's are: an ID token issued in this same
            // second stays valid, so a sign-in right after signing out works.
            try await store.modify(uid: uid) { user in user.validSince = now }
            try await store.revokeRefreshTokens(uid: uid, now: now * 1000)
        }
        gate.changed(uid: uid)
    }

    // MARK: - Admin

    /// Fields an admin sets when creating or updating an account; nil leaves a field as it is.
    public struct AccountFields: Sendable {
        public var uid: String?
        public var email: String?
        public var password: String?
        public var displayName: String?
        public var photoURL: String?
        public var emailVerified: Bool?
        public var disabled: Bool?
        /// A JSON object, or `.null` to clear the claims.
        public var customClaims: Node?
        public var deleteAttributes: [String] = []
        /// Seconds: refresh tokens made before it stop working.
        public var validSince: Int64?
        /// E.164 (`+15555550100`).
        public var phoneNumber: String?
        /// Sign-in methods to remove: `phone`, or a linked provider's ID (`github.com`, `oidc.x`).
        public var deleteProviders: [String] = []

        public init() {}
    }

    /// Creates an account as an admin.
    public func createUser(_ fields: AccountFields) async throws(AuthError) -> UserRecord {
        let now = clock()
        let uid = fields.uid ?? Self.newUID()
        guard !uid.isEmpty, uid.utf8.count <= 128 else { throw .invalidArgument("uid must be 1 to 128 characters") }
        var user = UserRecord(uid: uid, provider: "password", createdAt: now, validSince: now / 1000)
        try apply(fields, passwordHash: try await passwordHash(of: fields), now: now, to: &user)
        if user.email == nil && user.passwordHash == nil { user.provider = user.phoneNumber == nil ? "custom" : "phone" }
        let created = user
        try await withStore { try await store.insert(created) }
        logger.info("account created by an admin", metadata: ["uid": "\(uid)"])
        return user
    }

    /// Updates an account as an admin (applied to the account as it is when written).
    public func updateUser(uid: String, _ fields: AccountFields) async throws(AuthError) -> UserRecord {
        let hash = try await passwordHash(of: fields)
        let now = clock()
        return try await withStore {
            let user = try await store.modify(uid: uid) { user in
                try self.apply(fields, passwordHash: hash, now: now, to: &user)
                // A new password ends every session, as a password the user changes does.
                if hash != nil, fields.validSince == nil { user.validSince = now / 1000 }
            }
            // An explicit validSince needs no more: refreshes check it. A password ends them all.
            if hash != nil { try await store.revokeRefreshTokens(uid: uid, now: now) }
            if fields.disabled != nil || fields.validSince != nil || hash != nil { gate.changed(uid: uid) }
            return user
        }
    }

    /// Deletes an account as an admin.
    public func deleteUser(uid: String) async throws(AuthError) {
        guard try await withStore({ try await store.delete(uid: uid) }) else { throw .userNotFound }
        gate.changed(uid: uid)
        logger.info("account deleted by an admin", metadata: ["uid": "\(uid)"])
    }

    /// One page of accounts in uid order; the page token is the last uid of the previous page.
    public func listUsers(pageToken: String?, maxResults: Int) async throws(AuthError) -> (users: [UserRecord], next: String?) {
        guard (1...1000).contains(maxResults) else { throw .invalidArgument("maxResults must be between 1 and 1000") }
        let page = try await withStore { try await store.users(after: pageToken, limit: maxResults + 1) }
        let users = Array(page.prefix(maxResults))
        return (users, page.count > maxResults ? users.last?.uid : nil)
    }

    /// The hash of the password `fields` sets, if any (checked first).
    private func passwordHash(of fields: AccountFields) async throws(AuthError) -> String? {
        guard fields.password != nil else { return nil }
        let password = try checkedPassword(fields.password)
        return try await hashed(password)
    }

    private func apply(_ fields: AccountFields, passwordHash: String?, now: Int64, to user: inout UserRecord) throws(AuthError) {
        if fields.email != nil { user.email = try checkedEmail(fields.email) }
        if let passwordHash {
            user.passwordHash = passwordHash
            user.passwordUpdatedAt = now
        }
        if let name = fields.displayName { user.displayName = name }
        if let photo = fields.photoURL { user.photoURL = photo }
        if fields.deleteAttributes.contains("DISPLAY_NAME") { user.displayName = nil }
        if fields.deleteAttributes.contains("PHOTO_URL") { user.photoURL = nil }
        if let verified = fields.emailVerified { user.emailVerified = verified }
        if let disabled = fields.disabled { user.disabled = disabled }
        if let validSince = fields.validSince { user.validSince = validSince }
        if let phone = fields.phoneNumber { user.phoneNumber = try Self.checkedPhoneNumber(phone) }
        for provider in fields.deleteProviders {
            if provider == "phone" { user.phoneNumber = nil }
            user.identities.removeAll { $0.providerID == provider }
        }
        if let claims = fields.customClaims {
            guard claims.isNull || claims.children != nil else { throw .invalidArgument("custom claims must be a JSON object") }
            if let reserved = claims.children?.first(where: { TokenIssuer.reservedClaims.contains($0.key.string) }) {
                throw AuthError("INVALID_CLAIMS", detail: "Developer claim \"\(reserved.key.string)\" is reserved")
            }
            guard JSONWriter.bytes(claims).count <= 1000 else { throw AuthError("CLAIMS_TOO_LARGE") }
            user.customClaims = claims
        }
    }

    // MARK: - Helpers

    func session(
        for user: UserRecord, provider: String, isNewUser: Bool, sessionClaims: Node = .null
    ) async throws(AuthError) -> Session {
        let refreshToken = Self.newRefreshToken()
        let record = RefreshTokenRecord(
            uid: user.uid, createdAt: clock(), provider: provider, claims: sessionClaims)
        let digest = Self.digest(refreshToken)
        try await withStore { try await store.addRefreshToken(digest: digest, record) }
        let idToken = try await signedIDToken(
            for: user, provider: provider, authTime: record.createdAt / 1000, sessionClaims: sessionClaims, session: digest)
        return Session(user: user, idToken: idToken, refreshToken: refreshToken, expiresIn: issuer.idTokenLifetime, isNewUser: isNewUser)
    }

    /// - Parameter session: the digest of the session's refresh token; the token's `jti` is a
    ///   hash of it, which tells sessions apart without revealing anything about the token, and
    ///   a random part, so that every token issued differs from the one before even within one
    ///   second (the SDKs tell listeners of a refreshed token only when it is a new one).
    private func signedIDToken(
        for user: UserRecord, provider: String, authTime: Int64, sessionClaims: Node = .null, session: Data
    ) async throws(AuthError) -> String {
        let issuance = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0.prefix(6)) }
        let sessionID = TokenIssuer.base64URL(Data(SHA256.hash(data: Data("hearth-session".utf8) + session).prefix(12)))
            + "." + TokenIssuer.base64URL(issuance)
        do {
            return try await issuer.idToken(
                for: user, signInProvider: provider, authTime: authTime, now: nowSeconds, sessionClaims: sessionClaims,
                session: sessionID)
        } catch {
            logger.error("cannot sign an ID token", metadata: ["error": "\(error)"])
            throw AuthError("INTERNAL_ERROR")
        }
    }

    func checkedEmail(_ email: String?) throws(AuthError) -> String {
        guard let email, !email.isEmpty else { throw .missingEmail }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        // Characters that are quoting or delimiters in mail headers never appear (nothing can be
        // read as another address when the message is sent).
        let delimiters = Set("<>\"(),;:\\[]")
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, email.utf8.count <= 254,
            !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 32 || $0.value == 127 }),
            !email.contains(where: { delimiters.contains($0) })
        else { throw .invalidEmail }
        return email.lowercased()
    }

    /// Counts a request that costs the server (an email, a begun sign-in) against `client`'s
    /// hourly allowance; throws `TOO_MANY_ATTEMPTS_TRY_LATER` when it is used up.
    func countClientRequest(_ client: String?) throws(AuthError) {
        guard let client else { return }
        let key = "client:" + client
        switch clientRequests.admit(key) {
        case .blocked: throw .tooManyAttempts
        case .admitted, .busy: clientRequests.finish(key, failed: true)
        }
    }

    /// Counts a sign-up against `client`'s allowance; throws `TOO_MANY_ATTEMPTS_TRY_LATER`
    /// when it is used up. Admins (nil) and emulator mode are not counted.
    func countSignUp(from client: String?) throws(AuthError) {
        guard let client, !policy.emulator else { return }
        guard signUps.take("signup:" + ClientAddress.limitKey(client)) else { throw .tooManyRequests }
    }

    /// `url` read as a browser reads it (see ``BrowserURL``), or `invalid` when it is not a
    /// plain `http(s)` URL; then `UNAUTHORIZED_DOMAIN` unless its host is one of the
    /// authorized domains exactly, when the policy names them (and `checkDomain`).
    func checkedContinueURL(_ url: String, invalid: AuthError, checkDomain: Bool = true) throws(AuthError) -> BrowserURL {
        guard let parsed = BrowserURL(url) else { throw invalid }
        if checkDomain, let domains = policy.authorizedDomains, !parsed.isAuthorized(by: domains) {
            throw AuthError("UNAUTHORIZED_DOMAIN", detail: "Domain not allowlisted by project")
        }
        return parsed
    }

    /// A phone number in E.164 form: `+`, then 7 to 15 digits not starting with 0.
    static func checkedPhoneNumber(_ phone: String) throws(AuthError) -> String {
        let digits = phone.dropFirst()
        guard phone.first == "+", (7...15).contains(digits.count), digits.first != "0",
            digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { throw AuthError("INVALID_PHONE_NUMBER", detail: "Invalid format.") }
        return phone
    }

    func checkedPassword(_ password: String?) throws(AuthError) -> String {
        guard let password, !password.isEmpty else { throw .missingPassword }
        guard password.count >= policy.minimumPasswordLength else {
            throw AuthError("WEAK_PASSWORD", detail: "Password should be at least \(policy.minimumPasswordLength) characters")
        }
        guard password.utf8.count <= 4096 else { throw .invalidArgument("the password is too long") }
        return password
    }

    /// Runs work on the account store; errors other than ``AuthError`` become an internal
    /// error, logged without details that could hold secrets.
    func withStore<T: Sendable>(_ work: () async throws -> T) async throws(AuthError) -> T {
        do {
            return try await work()
        } catch let error as AuthError {
            throw error
        } catch {
            logger.error("account storage failed", metadata: ["error": "\(type(of: error))"])
            throw AuthError("INTERNAL_ERROR")
        }
    }

    /// A new hash of `password`, waiting behind sign-ins (see ``hashing(_:_:)``).
    func hashed(_ password: String) async throws(AuthError) -> String {
        try await hashing(.normal) { [hasher] in try hasher.hash(password) }
    }

    /// Runs password hashing (scrypt) on ``hashingPool`` when ``hashGate`` gives it a turn;
    /// `TOO_MANY_ATTEMPTS_TRY_LATER` when it cannot wait. Other errors become an internal
    /// error, logged without details that could hold secrets.
    func hashing<T: Sendable>(
        _ priority: ConcurrencyGate.Priority, _ work: @escaping @Sendable () throws -> T
    ) async throws(AuthError) -> T {
        do {
            try await hashGate.enter(priority)
        } catch {
            if error == .full { logger.warning("a password hash was refused: too many are waiting") }
            throw .tooManyRequests
        }
        defer { hashGate.leave(priority) }
        do {
            return try await Self.hashingPool.runIfActive(work)
        } catch {
            logger.error("password hashing failed", metadata: ["error": "\(type(of: error))"])
            throw AuthError("INTERNAL_ERROR")
        }
    }

    /// Threads for password hashing only, one per core, shared by every service in the process:
    /// hashes never hold up NIO's blocking pool (file I/O) or its event loops.
    static let hashingPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, ProcessInfo.processInfo.activeProcessorCount))
        pool.start()
        return pool
    }()

    /// A 28-character uid like Firebase's.
    static func newUID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<28).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// 32 random bytes from the system's secure generator, base64url.
    static func newRefreshToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return TokenIssuer.base64URL(bytes)
    }

    static func digest(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

}

extension AuthService {
    /// The account service kept in `directory` (a data folder's `auth/`): the accounts
    /// database `accounts.sqlite` and the signing key `signing-key.pem`, made on first use.
    public static func open(
        in directory: URL, projectID: String, policy: Policy = Policy(), hasher: PasswordHasher = PasswordHasher(),
        email: EmailDelivery? = nil, http: (any HTTPFetching)? = nil, events: (any AccountEventRecorder)? = nil,
        blockingHooks: (any AccountBlockingHooks)? = nil, clock: @escaping @Sendable () -> Int64, logger: Logger
    ) async throws -> AuthService {
        // Only the owner may read password hashes and the signing key.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let key = try TokenIssuer.loadOrCreateKey(at: directory.appendingPathComponent("signing-key.pem"))
        let issuer = await TokenIssuer(privateKey: key, projectID: projectID)
        let store = try AccountStore(path: directory.appendingPathComponent("accounts.sqlite").path, recorder: events)
        return AuthService(
            store: store, issuer: issuer, policy: policy, hasher: hasher, email: email, http: http, blockingHooks: blockingHooks,
            clock: clock, logger: logger)
    }

    /// The account service over `store`, signing tokens with the key `signingKeyPEM` (see
    /// ``TokenIssuer/newKeyPEM()``). The nodes of a cluster each open one over the same shared
    /// store and key, so a token one node signs is accepted by every other.
    public static func open(
        store: any AccountStorage, signingKeyPEM: String, projectID: String, policy: Policy = Policy(),
        hasher: PasswordHasher = PasswordHasher(), email: EmailDelivery? = nil, http: (any HTTPFetching)? = nil,
        blockingHooks: (any AccountBlockingHooks)? = nil, clock: @escaping @Sendable () -> Int64, logger: Logger
    ) async throws -> AuthService {
        let issuer = await TokenIssuer(privateKey: try TokenIssuer.key(pem: signingKeyPEM), projectID: projectID)
        return AuthService(
            store: store, issuer: issuer, policy: policy, hasher: hasher, email: email, http: http, blockingHooks: blockingHooks,
            clock: clock, logger: logger)
    }
}
