import Foundation
import GRDB
import HearthCore

extension AccountStore {
    /// A code as the emulator lists it (`/emulator/v1/projects/<id>/oobCodes`).
    public struct ListedActionCode: Sendable, Equatable {
        public var code: ActionCode
        public var oobCode: String
        public var link: String
    }

    /// Records an action code by the digest of its text. In emulator mode `listed` keeps the
    /// code and link readable for the emulator's listing; otherwise only the digest is kept.
    public func addActionCode(digest: Data, _ code: ActionCode, listed: (code: String, link: String)? = nil) throws {
        try pool.write { db in try Self.insertActionCode(digest: digest, code, listed: listed, in: db) }
    }

    static func insertActionCode(digest: Data, _ code: ActionCode, listed: (code: String, link: String)?, in db: Database) throws {
        try db.execute(sql: "DELETE FROM action_code WHERE expires_at < ?", arguments: [code.createdAt])
        try db.execute(
                sql: """
                    INSERT INTO action_code (digest, kind, uid, email, new_email, created_at, expires_at, continue_url, code, link)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    digest, code.kind.rawValue, code.uid, code.email, code.newEmail, code.createdAt, code.expiresAt,
                    code.continueURL, listed?.code, listed?.link,
                ])
    }

    /// Forgets every code made for the account `uid` (after a reset or an email change).
    static func deleteActionCodes(uid: String, in db: Database) throws {
        try db.execute(sql: "DELETE FROM action_code WHERE uid = ?", arguments: [uid])
    }

    /// The unexpired code with this digest, left in place.
    /// - Throws: `INVALID_OOB_CODE` when there is none, `EXPIRED_OOB_CODE` when it expired.
    public func actionCode(digest: Data, now: Int64) throws -> ActionCode {
        try pool.read { db in try Self.liveActionCode(digest: digest, now: now, in: db) }
    }

    private static func liveActionCode(digest: Data, now: Int64, in db: Database) throws -> ActionCode {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM action_code WHERE digest = ?", arguments: [digest]),
            let code = actionCode(row)
        else { throw AuthError.invalidOOBCode }
        guard code.expiresAt >= now else { throw AuthError.expiredOOBCode }
        return code
    }

    /// Uses up the unexpired code with this digest: it is removed in the same transaction
    /// that runs `apply`, so a code works once even when two requests race.
    public func consumeActionCode<T>(
        digest: Data, now: Int64, apply: (ActionCode, Database) throws -> T
    ) throws -> T {
        try pool.write { db in
            let code = try Self.liveActionCode(digest: digest, now: now, in: db)
            try db.execute(sql: "DELETE FROM action_code WHERE digest = ?", arguments: [digest])
            return try apply(code, db)
        }
    }

    /// The codes kept readable in emulator mode, oldest first.
    public func listedActionCodes() throws -> [ListedActionCode] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM action_code WHERE code IS NOT NULL ORDER BY created_at, rowid"
            ).compactMap { row in
                guard let code = Self.actionCode(row), let text: String = row["code"], let link: String = row["link"] else {
                    return nil
                }
                return ListedActionCode(code: code, oobCode: text, link: link)
            }
        }
    }

    /// Forgets every listed code (the emulator's `DELETE …/oobCodes`).
    public func clearListedActionCodes() throws {
        try pool.write { db in try db.execute(sql: "DELETE FROM action_code WHERE code IS NOT NULL") }
    }

    private static func actionCode(_ row: Row) -> ActionCode? {
        guard let kind = ActionCode.Kind(rawValue: row["kind"]) else { return nil }
        return ActionCode(
            kind: kind, uid: row["uid"], email: row["email"], newEmail: row["new_email"], createdAt: row["created_at"],
            expiresAt: row["expires_at"], continueURL: row["continue_url"])
    }

    // MARK: - Writing accounts inside a code's transaction

    /// The account `uid` read inside a write transaction.
    static func user(uid: String, in db: Database) throws -> UserRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM user WHERE uid = ?", arguments: [uid]).map { try record($0, db) }
    }

    /// The account with `email` read inside a write transaction.
    static func user(email: String, in db: Database) throws -> UserRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM user WHERE email = ?", arguments: [email]).map { try record($0, db) }
    }
}
