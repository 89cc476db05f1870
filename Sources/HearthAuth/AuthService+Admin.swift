import Foundation
import HearthCore
import Logging

extension AuthService {
    /// What an admin looks accounts up by (`accounts:lookup` as `getUsers` sends it).
    public struct Identifiers: Sendable {
        public var uids: [String] = []
        public var emails: [String] = []
        public var phoneNumbers: [String] = []
        /// (provider ID, the user's ID at the provider).
        public var federated: [(providerID: String, rawID: String)] = []

        public init() {}
    }

    /// The accounts any identifier names, each once, in the order first named.
    public func users(matching identifiers: Identifiers) async throws(AuthError) -> [UserRecord] {
        try await withStore {
            var found: [UserRecord] = []
            var seen: Set<String> = []
            func add(_ user: UserRecord?) {
                guard let user, seen.insert(user.uid).inserted else { return }
                found.append(user)
            }
            for uid in identifiers.uids { add(try await store.user(uid: uid)) }
            for email in identifiers.emails { add(try await store.user(email: email)) }
            for phone in identifiers.phoneNumbers { add(try await store.user(phoneNumber: phone)) }
            for entry in identifiers.federated { add(try await store.user(providerID: entry.providerID, rawID: entry.rawID)) }
            return found
        }
    }

    /// Up to `limit` accounts after `after` (uid order) matching `text` and the disabled filter:
    /// the console's user search.
    public func searchUsers(_ text: String, disabled: Bool?, after: String?, limit: Int) async throws(AuthError) -> [UserRecord] {
        try await withStore { try await store.search(text, disabled: disabled, after: after, limit: limit) }
    }

    // MARK: - Import

    /// One account of a user import, as `accounts:batchCreate` gives it.
    public struct ImportedUser: Sendable {
        public var uid: String
        public var email: String?
        public var emailVerified = false
        public var displayName: String?
        public var photoURL: String?
        public var phoneNumber: String?
        public var disabled = false
        /// A JSON object, or nil for none.
        public var customClaims: Node?
        public var passwordHash: Data?
        public var salt: Data?
        public var identities: [LinkedIdentity] = []
        /// Milliseconds since the epoch.
        public var createdAt: Int64?
        public var lastLoginAt: Int64?

        public init(uid: String) { self.uid = uid }
    }

    /// Imports accounts, replacing any with the same uid (as Firebase's import documentation
    /// says). Each account that cannot be imported is reported by its index with Firebase's
    /// message, and the others are imported.
    /// - Parameter hash: how the imported password hashes were made (its `hash` and `salt` are
    ///   replaced by each user's); required when any user has a password hash.
    /// - Returns: the refused accounts' indexes and reasons.
    /// - Throws: `DUPLICATE_LOCAL_ID : <uid>` when a uid is repeated in the request, and
    ///   refusals of the hash parameters, before anything is imported.
    public func importUsers(_ users: [ImportedUser], hash: ImportedPasswordHash?) async throws(AuthError) -> [(index: Int, message: String)] {
        guard !users.isEmpty else { throw AuthError("MISSING_USER_ACCOUNT") }
        guard users.count <= 1000 else { throw .invalidArgument("at most 1000 users can be imported at once") }
        var seenUIDs: Set<String> = []
        for user in users where !user.uid.isEmpty {
            guard seenUIDs.insert(user.uid).inserted else { throw AuthError("DUPLICATE_LOCAL_ID", detail: user.uid) }
        }
        if users.contains(where: { $0.passwordHash != nil }) {
            guard let hash else { throw AuthError("MISSING_HASH_ALGORITHM") }
            try hash.validatedParameters()
        }
        let now = clock()
        var failures: [(index: Int, message: String)] = []
        for (index, imported) in users.enumerated() {
            do throws(ImportRefusal) {
                let user = try importedRecord(imported, hash: hash, now: now)
                do {
                    try await withStore { try await store.replace(user) }
                } catch let error where error == .federatedUserIDAlreadyLinked {
                    throw ImportRefusal("raw id exists in other account in database")
                } catch {
                    throw ImportRefusal(error.message)
                }
            } catch {
                failures.append((index, error.message))
            }
        }
        if users.count > failures.count {
            logger.info("accounts imported by an admin", metadata: ["count": "\(users.count - failures.count)"])
        }
        return failures
    }

    /// Why one user of an import was refused, in Firebase's words.
    struct ImportRefusal: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    private func importedRecord(_ imported: ImportedUser, hash: ImportedPasswordHash?, now: Int64) throws(ImportRefusal) -> UserRecord {
        guard !imported.uid.isEmpty else { throw ImportRefusal("localId is missing") }
        guard imported.uid.utf8.count <= 128 else { throw ImportRefusal("localId is invalid") }
        var user = UserRecord(
            uid: imported.uid, provider: "custom", createdAt: imported.createdAt ?? now, lastLoginAt: imported.lastLoginAt,
            validSince: now / 1000)
        if imported.email != nil {
            guard let email = try? checkedEmail(imported.email) else { throw ImportRefusal("email is invalid") }
            user.email = email
        }
        user.emailVerified = imported.emailVerified
        user.displayName = imported.displayName
        user.photoURL = imported.photoURL
        if let phone = imported.phoneNumber {
            guard let checked = try? Self.checkedPhoneNumber(phone) else { throw ImportRefusal("phone number format is invalid") }
            user.phoneNumber = checked
        }
        user.disabled = imported.disabled
        if let claims = imported.customClaims {
            guard claims.isNull || claims.children != nil else { throw ImportRefusal("Invalid custom claims provided.") }
            if claims.children?.contains(where: { TokenIssuer.reservedClaims.contains($0.key.string) }) == true {
                throw ImportRefusal("Custom claims provided include a reserved claim.")
            }
            guard JSONWriter.bytes(claims).count <= 1000 else { throw ImportRefusal("Custom claims provided are too large.") }
            user.customClaims = claims
        }
        for identity in imported.identities {
            guard !identity.providerID.isEmpty, !identity.rawID.isEmpty else {
                throw ImportRefusal("federatedId or (providerId & rawId) is required")
            }
            guard !["password", "phone"].contains(identity.providerID) else { continue }
            user.identities.append(identity)
        }
        if let digest = imported.passwordHash, var template = hash {
            template.hash = digest
            template.salt = imported.salt ?? Data()
            do {
                user.passwordHash = try template.validated().stored
            } catch {
                throw ImportRefusal("passwordHash or salt is invalid")
            }
            user.passwordUpdatedAt = now
        }
        if user.passwordHash != nil || user.email != nil { user.provider = "password" }
        if user.passwordHash == nil, user.email == nil, let first = user.identities.first { user.provider = first.providerID }
        return user
    }

    // MARK: - Session cookies

    /// The longest and shortest session a cookie may carry, as Firebase allows (seconds).
    public static let sessionCookieDurations: ClosedRange<Int64> = 5 * 60...14 * 24 * 60 * 60

    /// A session cookie (a JWT signed as Hearth's ID tokens are, with Firebase's session
    /// issuer) for the user an ID token speaks for. As with Firebase, checking that the
    /// sign-in is recent is the app's part (the token's `auth_time`).
    public func createSessionCookie(idToken: String?, validSeconds: Int64) async throws(AuthError) -> String {
        guard let idToken, !idToken.isEmpty else { throw AuthError("MISSING_ID_TOKEN") }
        guard Self.sessionCookieDurations.contains(validSeconds) else { throw AuthError("INVALID_DURATION") }
        let (user, claims) = try await verifiedUser(idToken: idToken)
        do {
            return try await issuer.sessionCookie(fromIDTokenClaims: claims, user: user, validSeconds: validSeconds, now: nowSeconds)
        } catch {
            logger.error("cannot sign a session cookie", metadata: ["error": "\(error)"])
            throw AuthError("INTERNAL_ERROR")
        }
    }

    /// The account a session cookie speaks for and its claims; with `checkRevoked`, cookies
    /// of disabled accounts and those older than the account's last revocation are refused.
    public func verifySessionCookie(_ cookie: String, checkRevoked: Bool) async throws(AuthError) -> (UserRecord, Node) {
        let claims = try await issuer.verifySessionCookie(cookie, now: nowSeconds)
        guard case .string(let uid) = claims.child(ChildKey("sub")),
            let user = try await withStore({ try await store.user(uid: uid) })
        else { throw .userNotFound }
        if checkRevoked {
            guard !user.disabled else { throw .userDisabled }
            if let signedIn = claims.child(ChildKey("auth_time")).integerValue, signedIn < user.validSince {
                throw AuthError("SESSION_COOKIE_REVOKED")
            }
        }
        return (user, claims)
    }
}
