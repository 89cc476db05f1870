import Foundation
import GRDB
import HearthCore

extension AccountStore {
    /// A code as the emulator lists it.
    public typealias ListedActionCode = HearthAuth.ListedActionCode

    public func addActionCode(digest: Data, _ code: ActionCode, listed: (code: String, link: String)?) async throws {
        try await pool.write { db in try Self.insertActionCode(digest: digest, code, listed: listed, in: db) }
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

    public func actionCode(digest: Data, now: Int64) async throws -> ActionCode {
        try await pool.read { db in try Self.liveActionCode(digest: digest, now: now, in: db) }
    }

    private static func liveActionCode(digest: Data, now: Int64, in db: Database) throws -> ActionCode {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM action_code WHERE digest = ?", arguments: [digest]),
            let code = actionCode(row)
        else { throw AuthError.invalidOOBCode }
        guard code.expiresAt >= now else { throw AuthError.expiredOOBCode }
        return code
    }

    public func consumeActionCode<T: Sendable>(
        digest: Data, now: Int64, account: @escaping @Sendable (ActionCode) throws -> AccountChange.Lookup?,
        apply: @escaping @Sendable (ActionCode, UserRecord?) throws -> (AccountChange, T)
    ) async throws -> T {
        // The code goes in the transaction that applies it, so it works once even when two
        // requests race; a refused use rolls back and leaves it.
        try await pool.write { db in
            let code = try Self.liveActionCode(digest: digest, now: now, in: db)
            try db.execute(sql: "DELETE FROM action_code WHERE digest = ?", arguments: [digest])
            let user: UserRecord? =
                switch try account(code) {
                case .uid(let uid): try Self.user(uid: uid, in: db)
                case .email(let email): try Self.user(email: email, in: db)
                case nil: nil
                }
            let (change, result) = try apply(code, user)
            try Self.write(change, now: now, in: db)
            if change.isNew, let created = change.user { try record(.created(created), in: db) }
            return result
        }
    }

    /// Writes what using a code changes, inside its transaction.
    static func write(_ change: AccountChange, now: Int64, in db: Database) throws {
        if let user = change.user {
            if change.isNew { try insertRow(user, in: db) } else { try updateRow(user, in: db) }
            if change.revokesSessions { try revokeRefreshTokens(uid: user.uid, now: now, in: db) }
            if change.deletesActionCodes { try deleteActionCodes(uid: user.uid, in: db) }
        }
        if let new = change.newActionCode { try insertActionCode(digest: new.digest, new.code, listed: new.listed, in: db) }
    }

    public func listedActionCodes() async throws -> [ListedActionCode] {
        try await pool.read { db in
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

    public func clearListedActionCodes() async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM action_code WHERE code IS NOT NULL") }
    }

    private static func actionCode(_ row: Row) -> ActionCode? {
        guard let kind = ActionCode.Kind(rawValue: row["kind"]) else { return nil }
        return ActionCode(
            kind: kind, uid: row["uid"], email: row["email"], newEmail: row["new_email"], createdAt: row["created_at"],
            expiresAt: row["expires_at"], continueURL: row["continue_url"])
    }

    // MARK: - Reading accounts inside a transaction

    /// The account `uid` read inside a transaction.
    static func user(uid: String, in db: Database) throws -> UserRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM user WHERE uid = ?", arguments: [uid]).map { try record($0, db) }
    }

    /// The account with `email` (as given) read inside a transaction.
    static func user(email: String, in db: Database) throws -> UserRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM user WHERE email = ?", arguments: [email]).map { try record($0, db) }
    }
}
