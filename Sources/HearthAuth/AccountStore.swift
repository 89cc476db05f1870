import Foundation
import GRDB
import HearthCore

/// The accounts and their refresh tokens, in one SQLite file (WAL, `synchronous=FULL`).
///
/// Nothing is cached in memory, so `hearth users` can change accounts while a server runs.
/// Refresh tokens are stored as SHA-256 digests only: a copy of the file gives nobody a token.
public final class AccountStore: Sendable {
    private let pool: DatabasePool

    /// Opens (creating if needed) the account database at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
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
        return migrator
    }

    // MARK: - Users

    /// Adds an account.
    /// - Throws: `DUPLICATE_LOCAL_ID` or `EMAIL_EXISTS` when either is taken.
    public func insert(_ user: UserRecord) throws {
        try pool.write { db in
            if try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE uid = ?", arguments: [user.uid]) != nil {
                throw AuthError.duplicateLocalID
            }
            if let email = user.email, try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ?", arguments: [email]) != nil {
                throw AuthError.emailExists
            }
            try db.execute(
                sql: """
                    INSERT INTO user (uid, email, email_verified, display_name, photo_url, password_hash, disabled,
                                      custom_claims, provider, created_at, last_login_at, valid_since)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: Self.arguments(user))
        }
    }

    /// Replaces an existing account's fields.
    /// - Throws: `USER_NOT_FOUND` when it does not exist, `EMAIL_EXISTS` when its new email is taken.
    public func update(_ user: UserRecord) throws {
        try pool.write { db in
            if let email = user.email,
                try Row.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ? AND uid != ?", arguments: [email, user.uid]) != nil
            {
                throw AuthError.emailExists
            }
            var arguments = Self.arguments(user)
            _ = arguments.append(contentsOf: [user.uid])
            try db.execute(
                sql: """
                    UPDATE user SET uid = ?, email = ?, email_verified = ?, display_name = ?, photo_url = ?,
                        password_hash = ?, disabled = ?, custom_claims = ?, provider = ?, created_at = ?,
                        last_login_at = ?, valid_since = ?
                    WHERE uid = ?
                    """,
                arguments: arguments)
            guard db.changesCount > 0 else { throw AuthError.userNotFound }
        }
    }

    /// The account `uid`, if it exists.
    public func user(uid: String) throws -> UserRecord? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM user WHERE uid = ?", arguments: [uid]).map(Self.record)
        }
    }

    /// The account with `email` (compared lower-cased), if it exists.
    public func user(email: String) throws -> UserRecord? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM user WHERE email = ?", arguments: [email.lowercased()]).map(Self.record)
        }
    }

    /// Up to `limit` accounts in uid order, starting after `after`.
    public func users(after: String? = nil, limit: Int) throws -> [UserRecord] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM user WHERE uid > ? ORDER BY uid LIMIT ?", arguments: [after ?? "", limit]
            ).map(Self.record)
        }
    }

    /// The number of accounts.
    public func count() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? 0 }
    }

    /// Deletes an account and its refresh tokens.
    /// - Returns: false when there was no such account.
    @discardableResult
    public func delete(uid: String) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM user WHERE uid = ?", arguments: [uid])
            return db.changesCount > 0
        }
    }

    // MARK: - Refresh tokens

    /// One session, as its refresh token records it.
    public struct RefreshToken: Sendable, Equatable {
        public var uid: String
        /// Milliseconds since the epoch.
        public var createdAt: Int64
        /// How the session signed in (`password`, `custom`, …); nil for sessions recorded
        /// before Hearth kept it.
        public var provider: String?
        /// Developer claims the session's ID tokens carry besides the account's own.
        public var claims: Node

        public init(uid: String, createdAt: Int64, provider: String? = nil, claims: Node = .null) {
            self.uid = uid
            self.createdAt = createdAt
            self.provider = provider
            self.claims = claims
        }
    }

    /// Records a refresh token (by digest).
    public func addRefreshToken(digest: Data, _ session: RefreshToken) throws {
        let claims: String? = session.claims.isNull ? nil : JSONWriter.string(session.claims)
        try pool.write { db in
            try db.execute(
                sql: "INSERT INTO refresh_token (digest, uid, created_at, provider, claims) VALUES (?, ?, ?, ?, ?)",
                arguments: [digest, session.uid, session.createdAt, session.provider, claims])
        }
    }

    /// The session a refresh token (by digest) belongs to, if it is still recorded.
    public func refreshToken(digest: Data) throws -> RefreshToken? {
        try pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT uid, created_at, provider, claims FROM refresh_token WHERE digest = ?", arguments: [digest])
            else { return nil }
            return RefreshToken(uid: row["uid"], createdAt: row["created_at"], provider: row["provider"], claims: Self.json(row["claims"]))
        }
    }

    /// Forgets one refresh token (by digest) of `uid`; false when `uid` has no such token.
    @discardableResult
    public func revokeRefreshToken(digest: Data, uid: String) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM refresh_token WHERE digest = ? AND uid = ?", arguments: [digest, uid])
            return db.changesCount > 0
        }
    }

    /// Forgets every refresh token of `uid`.
    public func revokeRefreshTokens(uid: String) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM refresh_token WHERE uid = ?", arguments: [uid])
        }
    }

    // MARK: - Rows

    private static func arguments(_ user: UserRecord) -> StatementArguments {
        let claims: String? = user.customClaims.isNull ? nil : JSONWriter.string(user.customClaims)
        return [
            user.uid, user.email, user.emailVerified, user.displayName, user.photoURL, user.passwordHash, user.disabled,
            claims, user.provider, user.createdAt, user.lastLoginAt, user.validSince,
        ]
    }

    private static func record(_ row: Row) -> UserRecord {
        let claims = json(row["custom_claims"])
        return UserRecord(
            uid: row["uid"], email: row["email"], emailVerified: row["email_verified"], displayName: row["display_name"],
            photoURL: row["photo_url"], passwordHash: row["password_hash"], disabled: row["disabled"], customClaims: claims,
            provider: row["provider"], createdAt: row["created_at"], lastLoginAt: row["last_login_at"],
            validSince: row["valid_since"])
    }

    private static func json(_ text: String?) -> Node {
        guard let text, let parsed = try? JSONParser.parse(Array(text.utf8)) else { return .null }
        return parsed.node
    }
}
