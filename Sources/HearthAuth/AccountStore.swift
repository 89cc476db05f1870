import Foundation
import GRDB
import HearthCore
import HearthOutbox

/// The accounts and their refresh tokens, in one SQLite file (WAL, `synchronous=FULL`).
///
/// Given an ``AccountEventRecorder``, every account made or deleted commits the events it makes
/// (the functions' account triggers) in its own transaction, in the outbox tables of the same
/// file (``outbox``).
///
/// Nothing is cached in memory, so `hearth users` can change accounts while a server runs.
/// Work runs on GRDB's own queues (its async accessors), never blocking Swift's cooperative pool.
/// The methods are documented on ``AccountStorage``.
/// Refresh tokens are stored as SHA-256 digests only: a copy of the file gives nobody a token.
public final class AccountStore: AccountStorage {
    let pool: DatabasePool
    let recorder: (any AccountEventRecorder)?
    /// Where the events of account triggers wait for delivery.
    public let outbox: SQLiteOutbox
    private let outboxSubscribers = OutboxSubscribers()

    /// Opens (creating if needed) the account database at `path`.
    public init(path: String, recorder: (any AccountEventRecorder)? = nil) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
        self.recorder = recorder
        outbox = SQLiteOutbox(source: Self.outboxSource, writer: pool)
    }

    /// The source name of the accounts' outbox.
    public static let outboxSource = "accounts"

    /// Records the events `change` makes, inside the caller's transaction.
    func record(_ change: AccountLifecycleChange, in db: Database) throws {
        guard let recorder else { return }
        let events = recorder.events(for: change)
        guard !events.isEmpty else { return }
        try SQLiteOutbox.record(events, in: db, known: outboxSubscribers)
        db.afterNextTransaction(onCommit: { _ in recorder.committed() })
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("accounts") { db in
            try db.execute(sql: """
                CREATE TABLE user (
                    uid TEXT PRIMARY KEY NOT NULL,
                    email TEXT UNIQUE,
                    email_verified INTEGER NOT NULL DEFAULT 0,
                    display_name TEXT,
                    photo_url TEXT,
                    password_hash TEXT,
                    disabled INTEGER NOT NULL DEFAULT 0,
                    custom_claims TEXT,
                    provider TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    last_login_at INTEGER,
                    valid_since INTEGER NOT NULL
                );
                CREATE TABLE refresh_token (
                    digest BLOB PRIMARY KEY NOT NULL,
                    uid TEXT NOT NULL REFERENCES user(uid) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL
                );
                CREATE INDEX refresh_token_uid ON refresh_token(uid);
                """)
        }
        migrator.registerMigration("session-claims") { db in
            // The sign-in method and a custom token's developer claims belong to one session.
            try db.execute(sql: """
                ALTER TABLE refresh_token ADD COLUMN provider TEXT;
                ALTER TABLE refresh_token ADD COLUMN claims TEXT;
                """)
        }
        migrator.registerMigration("identities") { db in
            // Phone numbers and linked provider accounts are unique across accounts; action codes
            // (emailed links) and provider configurations live beside the accounts they serve.
            try db.execute(sql: """
                ALTER TABLE user ADD COLUMN phone_number TEXT;
                ALTER TABLE user ADD COLUMN password_updated_at INTEGER;
                CREATE UNIQUE INDEX user_phone_number ON user(phone_number);
                CREATE TABLE identity (
                    provider_id TEXT NOT NULL,
                    raw_id TEXT NOT NULL,
                    uid TEXT NOT NULL REFERENCES user(uid) ON DELETE CASCADE ON UPDATE CASCADE,
                    email TEXT,
                    display_name TEXT,
                    photo_url TEXT,
                    position INTEGER NOT NULL,
                    PRIMARY KEY (provider_id, raw_id)
                );
                CREATE INDEX identity_uid ON identity(uid);
                CREATE TABLE action_code (
                    digest BLOB PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    uid TEXT REFERENCES user(uid) ON DELETE CASCADE ON UPDATE CASCADE,
                    email TEXT NOT NULL,
                    new_email TEXT,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    continue_url TEXT,
                    code TEXT,
                    link TEXT
                );
                CREATE INDEX action_code_expiry ON action_code(expires_at);
                CREATE TABLE provider_config (
                    id TEXT PRIMARY KEY NOT NULL,
                    resource TEXT NOT NULL,
                    created_at INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("federated-sign-in") { db in
            // A sign-in begun with a provider (createAuthUri), until it comes back (signInWithIdp).
            try db.execute(sql: """
                CREATE TABLE pending_sign_in (
                    digest BLOB PRIMARY KEY NOT NULL,
                    provider_id TEXT NOT NULL,
                    state TEXT NOT NULL,
                    nonce TEXT NOT NULL,
                    code_verifier TEXT NOT NULL,
                    redirect_uri TEXT NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("revoked-sessions") { db in
            // A revoked session is kept (by digest) for a while, so its refresh answers
            // TOKEN_EXPIRED, as Firebase's does, rather than "unknown token".
            try db.execute(sql: """
                ALTER TABLE refresh_token ADD COLUMN revoked_at INTEGER;
                ALTER TABLE user ADD COLUMN email_link_sign_in INTEGER NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("service-accounts") { db in
            // Service accounts' public keys (the private halves are only in their key files).
            try db.execute(sql: """
                CREATE TABLE service_account_key (
                    id TEXT PRIMARY KEY NOT NULL,
                    client_email TEXT NOT NULL,
                    public_key TEXT NOT NULL,
                    token_uri TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER
                );
                """)
        }
        migrator.registerMigration("outbox") { db in
            // The events of account triggers, committed with the accounts they are about.
            try SQLiteOutbox.createTables(in: db)
        }
        migrator.registerMigration("outbox-cursors") { db in
            try SQLiteOutbox.addCursors(in: db)
        }
        migrator.registerMigration("last-refresh") { db in
            // When an account was last in use (a session refreshed), for lookups and retention.
            try db.execute(sql: "ALTER TABLE user ADD COLUMN last_refresh_at INTEGER")
        }
        return migrator
    }

    // MARK: - Users

    public func insert(_ user: UserRecord) async throws {
        try await pool.write { db in
            if try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE uid = ?", arguments: [user.uid]) != nil {
                throw AuthError.duplicateLocalID
            }
            try Self.checkUnique(user, in: db)
            try Self.insertRow(user, in: db)
            try record(.created(user), in: db)
        }
    }

    public func replace(_ user: UserRecord) async throws {
        try await pool.write { db in
            try Self.checkUnique(user, in: db)
            try db.execute(sql: "DELETE FROM user WHERE uid = ?", arguments: [user.uid])
            try Self.insertRow(user, in: db)
        }
    }

    static func insertRow(_ user: UserRecord, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO user (uid, email, email_verified, display_name, photo_url, password_hash, disabled,
                                  custom_claims, provider, created_at, last_login_at, valid_since, phone_number,
                                  password_updated_at, email_link_sign_in, last_refresh_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: arguments(user) + [user.lastRefreshAt])
        try writeIdentities(user, in: db)
    }

    /// Throws when another account (not `user.uid`) has `user`'s email, phone number or a linked identity.
    static func checkUnique(_ user: UserRecord, in db: Database) throws {
        if let email = user.email,
            try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ? AND uid != ?", arguments: [email, user.uid]) != nil
        {
            throw AuthError.emailExists
        }
        if let phone = user.phoneNumber,
            try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE phone_number = ? AND uid != ?", arguments: [phone, user.uid]) != nil
        {
            throw AuthError.phoneNumberExists
        }
        for identity in user.identities {
            if try Row.fetchOne(
                db, sql: "SELECT 1 FROM identity WHERE provider_id = ? AND raw_id = ? AND uid != ?",
                arguments: [identity.providerID, identity.rawID, user.uid]) != nil
            {
                throw AuthError.federatedUserIDAlreadyLinked
            }
        }
    }

    static func writeIdentities(_ user: UserRecord, in db: Database) throws {
        try db.execute(sql: "DELETE FROM identity WHERE uid = ?", arguments: [user.uid])
        for (position, identity) in user.identities.enumerated() {
            try db.execute(
                sql: """
                    INSERT INTO identity (provider_id, raw_id, uid, email, display_name, photo_url, position)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    identity.providerID, identity.rawID, user.uid, identity.email, identity.displayName, identity.photoURL,
                    position,
                ])
        }
    }

    public func update(_ user: UserRecord) async throws {
        try await pool.write { db in try Self.updateRow(user, in: db) }
    }

    public func modify<T: Sendable>(
        uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> T
    ) async throws -> (user: UserRecord, result: T) {
        // One write transaction: SQLite has one writer, so nothing changes the account between
        // the read and the write.
        try await pool.write { db in
            guard var user = try Self.user(uid: uid, in: db) else { throw AuthError.userNotFound }
            let result = try change(&user)
            try Self.updateRow(user, in: db)
            return (user, result)
        }
    }

    /// Replaces an existing account's fields inside a write transaction.
    static func updateRow(_ user: UserRecord, in db: Database) throws {
        try checkUnique(user, in: db)
        var arguments = arguments(user)
        _ = arguments.append(contentsOf: [user.uid])
        try db.execute(
            sql: """
                UPDATE user SET uid = ?, email = ?, email_verified = ?, display_name = ?, photo_url = ?,
                    password_hash = ?, disabled = ?, custom_claims = ?, provider = ?, created_at = ?,
                    last_login_at = ?, valid_since = ?, phone_number = ?, password_updated_at = ?, email_link_sign_in = ?
                WHERE uid = ?
                """,
            arguments: arguments)
        guard db.changesCount > 0 else { throw AuthError.userNotFound }
        try writeIdentities(user, in: db)
    }

    public func user(uid: String) async throws -> UserRecord? {
        try await pool.read { db in try Self.user(uid: uid, in: db) }
    }

    public func user(email: String) async throws -> UserRecord? {
        try await pool.read { db in try Self.user(email: email.lowercased(), in: db) }
    }

    public func user(phoneNumber: String) async throws -> UserRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM user WHERE phone_number = ?", arguments: [phoneNumber])
                .map { try Self.record($0, db) }
        }
    }

    public func user(providerID: String, rawID: String) async throws -> UserRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT user.* FROM identity JOIN user USING (uid) WHERE provider_id = ? AND raw_id = ?",
                arguments: [providerID, rawID]
            ).map { try Self.record($0, db) }
        }
    }

    public func users(after: String?, limit: Int) async throws -> [UserRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM user WHERE uid > ? ORDER BY uid LIMIT ?", arguments: [after ?? "", limit]
            ).map { try Self.record($0, db) }
        }
    }

    public func search(_ text: String, disabled: Bool?, after: String?, limit: Int) async throws -> [UserRecord] {
        let pattern = Self.likePattern(text)
        return try await pool.read { db in
            // SQLite's LIKE ignores the case of ASCII letters only (and lower() lowers only them).
            var sql = """
                SELECT * FROM user WHERE uid > ? AND (lower(uid) LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\'
                    OR lower(display_name) LIKE ? ESCAPE '\\' OR phone_number LIKE ? ESCAPE '\\')
                """
            var arguments: StatementArguments = [after ?? "", pattern, pattern, pattern, pattern]
            if let disabled {
                sql += " AND disabled = ?"
                _ = arguments.append(contentsOf: [disabled])
            }
            sql += " ORDER BY uid LIMIT ?"
            _ = arguments.append(contentsOf: [limit])
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { try Self.record($0, db) }
        }
    }

    /// The `LIKE` pattern (escaped with `\`) for text found anywhere, lower-cased.
    static func likePattern(_ text: String) -> String {
        "%" + text.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    public func count() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? 0 }
    }

    @discardableResult
    public func delete(uid: String) async throws -> Bool {
        try await pool.write { db in
            let deleted = recorder == nil ? nil : try Self.user(uid: uid, in: db)
            try db.execute(sql: "DELETE FROM user WHERE uid = ?", arguments: [uid])
            guard db.changesCount > 0 else { return false }
            if let deleted { try record(.deleted(deleted), in: db) }
            return true
        }
    }

    // MARK: - Refresh tokens

    /// One session, as its refresh token records it.
    public typealias RefreshToken = RefreshTokenRecord

    public func addRefreshToken(digest: Data, _ session: RefreshTokenRecord) async throws {
        let claims: String? = session.claims.isNull ? nil : JSONWriter.string(session.claims)
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO refresh_token (digest, uid, created_at, provider, claims) VALUES (?, ?, ?, ?, ?)",
                arguments: [digest, session.uid, session.createdAt, session.provider, claims])
        }
    }

    public func refreshToken(digest: Data) async throws -> RefreshTokenRecord? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT uid, created_at, provider, claims, revoked_at FROM refresh_token WHERE digest = ?", arguments: [digest])
            else { return nil }
            var token = RefreshTokenRecord(
                uid: row["uid"], createdAt: row["created_at"], provider: row["provider"], claims: Self.json(row["claims"]))
            token.revoked = (row["revoked_at"] as Int64?) != nil
            return token
        }
    }

    @discardableResult
    public func revokeRefreshToken(digest: Data, uid: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM refresh_token WHERE digest = ? AND uid = ?", arguments: [digest, uid])
            return db.changesCount > 0
        }
    }

    public func revokeRefreshTokens(uid: String, now: Int64) async throws {
        try await pool.write { db in try Self.revokeRefreshTokens(uid: uid, now: now, in: db) }
    }

    /// How long a revoked session is remembered (milliseconds): its refresh answers
    /// TOKEN_EXPIRED meanwhile, and "unknown token" after.
    public func recordRefresh(uid: String, at time: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE user SET last_refresh_at = ? WHERE uid = ?", arguments: [time, uid])
        }
    }

    static let revokedSessionMemory: Int64 = 30 * 24 * 3_600_000

    static func revokeRefreshTokens(uid: String, now: Int64, in db: Database) throws {
        try db.execute(sql: "UPDATE refresh_token SET revoked_at = ? WHERE uid = ? AND revoked_at IS NULL", arguments: [now, uid])
        try db.execute(sql: "DELETE FROM refresh_token WHERE revoked_at < ?", arguments: [now - revokedSessionMemory])
    }

    // MARK: - Rows

    static func arguments(_ user: UserRecord) -> StatementArguments {
        let claims: String? = user.customClaims.isNull ? nil : JSONWriter.string(user.customClaims)
        return [
            user.uid, user.email, user.emailVerified, user.displayName, user.photoURL, user.passwordHash, user.disabled,
            claims, user.provider, user.createdAt, user.lastLoginAt, user.validSince, user.phoneNumber, user.passwordUpdatedAt,
            user.emailLinkSignIn,
        ]
    }

    static func record(_ row: Row, _ db: Database) throws -> UserRecord {
        let claims = json(row["custom_claims"])
        var user = UserRecord(
            uid: row["uid"], email: row["email"], emailVerified: row["email_verified"], displayName: row["display_name"],
            photoURL: row["photo_url"], passwordHash: row["password_hash"], disabled: row["disabled"], customClaims: claims,
            provider: row["provider"], createdAt: row["created_at"], lastLoginAt: row["last_login_at"],
            validSince: row["valid_since"])
        user.phoneNumber = row["phone_number"]
        user.passwordUpdatedAt = row["password_updated_at"]
        user.emailLinkSignIn = row["email_link_sign_in"]
        user.lastRefreshAt = row["last_refresh_at"]
        user.identities = try Row.fetchAll(
            db, sql: "SELECT * FROM identity WHERE uid = ? ORDER BY position", arguments: [user.uid]
        ).map {
            LinkedIdentity(
                providerID: $0["provider_id"], rawID: $0["raw_id"], email: $0["email"], displayName: $0["display_name"],
                photoURL: $0["photo_url"])
        }
        return user
    }

    static func json(_ text: String?) -> Node {
        guard let text, let parsed = try? JSONParser.parseDocument(Array(text.utf8)) else { return .null }
        return parsed
    }
}
