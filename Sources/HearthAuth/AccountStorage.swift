import Foundation
import HearthCore

/// Where accounts live: what ``AuthService`` needs from its store. ``AccountStore`` keeps them
/// in one SQLite file (one node); a cluster keeps them in PostgreSQL, shared by every node.
///
/// Every read-modify-write is one transaction in the store, never a read here and a write
/// there: ``modify(uid:_:)``, ``consumeActionCode(digest:now:account:apply:)`` and
/// ``takePendingSignIn(digest:now:)`` see changes other requests (or other nodes) committed
/// before them and are seen whole by those after. Uniqueness (uid, email, phone number, linked
/// identity) holds under concurrent writers and is refused with the ``AuthError`` Firebase
/// answers: `DUPLICATE_LOCAL_ID`, `EMAIL_EXISTS`, `PHONE_NUMBER_EXISTS`,
/// `FEDERATED_USER_ID_ALREADY_LINKED`.
///
/// Closures given to the store must only compute (no side effects): a store whose transaction
/// lost a race to another node runs it again, closures included, and writes the last run's result.
///
/// Emails are stored as given (the service lower-cases them) and looked up lower-cased.
/// Times are milliseconds since the epoch unless a doc says otherwise.
public protocol AccountStorage: Sendable {
    // MARK: Accounts

    /// Adds an account.
    /// - Throws: `DUPLICATE_LOCAL_ID` or `EMAIL_EXISTS` (or `PHONE_NUMBER_EXISTS`,
    ///   `FEDERATED_USER_ID_ALREADY_LINKED`) when one of its identifiers is taken.
    func insert(_ user: UserRecord) async throws

    /// Adds an account, replacing one with the same uid (a user import does this, as Firebase's).
    /// - Throws: `EMAIL_EXISTS`, `PHONE_NUMBER_EXISTS` or `FEDERATED_USER_ID_ALREADY_LINKED` when
    ///   another account has one of its identifiers.
    func replace(_ user: UserRecord) async throws

    /// Replaces an existing account's fields.
    /// - Throws: `USER_NOT_FOUND` when it does not exist, `EMAIL_EXISTS` (…) when an identifier is taken.
    func update(_ user: UserRecord) async throws

    /// Reads the account `uid`, lets `change` edit it, and writes it back, all in one
    /// transaction: a change made meanwhile by another request (a password reset, a revocation,
    /// disabling) is seen by `change` and never overwritten with an older copy.
    /// - Returns: the account as written, and what `change` returned.
    /// - Throws: `USER_NOT_FOUND`, or what `change` throws (then nothing is written).
    func modify<T: Sendable>(
        uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> T
    ) async throws -> (user: UserRecord, result: T)

    /// The account `uid`, if it exists.
    func user(uid: String) async throws -> UserRecord?
    /// The account with `email` (compared lower-cased), if it exists.
    func user(email: String) async throws -> UserRecord?
    /// The account with the phone number `phoneNumber` (E.164), if it exists.
    func user(phoneNumber: String) async throws -> UserRecord?
    /// The account the provider's user `rawID` is linked to, if any.
    func user(providerID: String, rawID: String) async throws -> UserRecord?
    /// Up to `limit` accounts in uid order (by UTF-8 bytes), starting after `after`.
    func users(after: String?, limit: Int) async throws -> [UserRecord]
    /// Up to `limit` accounts in uid order after `after` whose uid, email, display name or phone
    /// number contains `text` (ASCII letters compared case-insensitively, as SQLite's `LIKE`),
    /// and that are disabled, enabled or either.
    func search(_ text: String, disabled: Bool?, after: String?, limit: Int) async throws -> [UserRecord]
    /// The number of accounts.
    func count() async throws -> Int
    /// Deletes an account with its refresh tokens, linked identities and action codes.
    /// - Returns: false when there was no such account.
    @discardableResult
    func delete(uid: String) async throws -> Bool

    // MARK: Sessions

    /// Records a refresh token (by digest).
    func addRefreshToken(digest: Data, _ session: RefreshTokenRecord) async throws
    /// The session a refresh token (by digest) belongs to, if it is still recorded.
    func refreshToken(digest: Data) async throws -> RefreshTokenRecord?
    /// Forgets one refresh token (by digest) of `uid`; false when `uid` has no such token.
    @discardableResult
    func revokeRefreshToken(digest: Data, uid: String) async throws -> Bool
    /// Revokes every refresh token of `uid` (kept as revoked for 30 days, then forgotten).
    func revokeRefreshTokens(uid: String, now: Int64) async throws
    /// Notes that a session of `uid` got a new ID token at `time` (``UserRecord/lastRefreshAt``).
    func recordRefresh(uid: String, at time: Int64) async throws

    // MARK: Action codes

    /// Records an action code by the digest of its text (expired codes go). In emulator mode
    /// `listed` keeps the code and link readable for the emulator's listing.
    func addActionCode(digest: Data, _ code: ActionCode, listed: (code: String, link: String)?) async throws
    /// The unexpired code with this digest, left in place.
    /// - Throws: `INVALID_OOB_CODE` when there is none, `EXPIRED_OOB_CODE` when it expired.
    func actionCode(digest: Data, now: Int64) async throws -> ActionCode
    /// Uses up the unexpired code with this digest, in one transaction that also reads the
    /// account `account` names (locked until the end) and writes what `apply` decides: a code
    /// works once even when two requests (or two nodes) race, and a refused use (`apply`
    /// throws) leaves the code and the accounts as they were.
    /// - Parameters:
    ///   - account: which account the use needs, from the code (nil for none); may throw to refuse.
    ///   - apply: the change, from the code and that account (nil when it does not exist).
    /// - Throws: `INVALID_OOB_CODE`, `EXPIRED_OOB_CODE`, what the closures throw, or a
    ///   uniqueness refusal of the change.
    func consumeActionCode<T: Sendable>(
        digest: Data, now: Int64, account: @escaping @Sendable (ActionCode) throws -> AccountChange.Lookup?,
        apply: @escaping @Sendable (ActionCode, UserRecord?) throws -> (AccountChange, T)
    ) async throws -> T
    /// The codes kept readable in emulator mode, oldest first.
    func listedActionCodes() async throws -> [ListedActionCode]
    /// Forgets every listed code (the emulator's `DELETE …/oobCodes`).
    func clearListedActionCodes() async throws

    // MARK: Provider sign-ins

    /// Records a pending sign-in under the digest of its session ID (expired ones go).
    func addPendingSignIn(digest: Data, _ pending: PendingSignIn, now: Int64) async throws
    /// Removes and returns the unexpired pending sign-in with this digest: it can be used once.
    func takePendingSignIn(digest: Data, now: Int64) async throws -> PendingSignIn?

    // MARK: Provider configurations

    /// Stores a provider configuration; `create` refuses one that exists (`CONFIGURATION_EXISTS`),
    /// and an update one that does not (`CONFIGURATION_NOT_FOUND`).
    func putProviderConfig(_ config: ProviderConfig, create: Bool, now: Int64) async throws
    /// The configuration of provider `id`, if there is one.
    func providerConfig(id: String) async throws -> ProviderConfig?
    /// Up to `limit` configurations of `kind` (all kinds when nil) in ID order after `after`.
    func providerConfigs(kind: ProviderConfig.Kind?, after: String?, limit: Int) async throws -> [ProviderConfig]
    /// Removes provider `id`'s configuration; false when there was none.
    @discardableResult
    func deleteProviderConfig(id: String) async throws -> Bool

    // MARK: Service accounts

    /// Keeps a new service-account key (its public half).
    func addServiceAccountKey(_ key: ServiceAccountKey) async throws
    func serviceAccountKey(id: String) async throws -> ServiceAccountKey?
    /// Every key, revoked ones included, oldest first.
    func serviceAccountKeys() async throws -> [ServiceAccountKey]
    /// Marks a key revoked; false when there is no such working key.
    @discardableResult
    func revokeServiceAccountKey(id: String, now: Int64) async throws -> Bool
}

extension AccountStorage {
    /// ``modify(uid:_:)`` for a change that returns nothing.
    @discardableResult
    public func modify(uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> Void) async throws -> UserRecord {
        try await modify(uid: uid) { (user: inout UserRecord) throws -> Bool in
            try change(&user)
            return true
        }.user
    }

    /// Up to `limit` accounts in uid order from the first.
    public func users(limit: Int) async throws -> [UserRecord] {
        try await users(after: nil, limit: limit)
    }

    /// Records an action code kept only as its digest.
    public func addActionCode(digest: Data, _ code: ActionCode) async throws {
        try await addActionCode(digest: digest, code, listed: nil)
    }

    /// ``search(_:disabled:after:limit:)`` over enabled and disabled accounts from the first.
    public func search(_ text: String, limit: Int) async throws -> [UserRecord] {
        try await search(text, disabled: nil, after: nil, limit: limit)
    }
}
