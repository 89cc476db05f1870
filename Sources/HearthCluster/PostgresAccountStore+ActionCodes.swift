import Foundation
import HearthAuth
import Logging
import PostgresNIO

extension PostgresAccountStore {
    public func addActionCode(digest: Data, _ code: ActionCode, listed: (code: String, link: String)?) async throws {
        let new = AccountChange.NewActionCode(digest: digest, code: code, listed: listed)
        try await transaction { connection in try await Self.insertActionCode(new, on: connection, logger) }
    }

    static func insertActionCode(_ new: AccountChange.NewActionCode, on connection: PostgresConnection, _ logger: Logger) async throws {
        let code = new.code
        try await connection.query("DELETE FROM hearth_auth_action_code WHERE expires_at < \(code.createdAt)", logger: logger)
        try await connection.query(
            """
            INSERT INTO hearth_auth_action_code (digest, kind, uid, email, new_email, created_at, expires_at, continue_url, code, link)
            VALUES (\(new.digest), \(code.kind.rawValue), \(code.uid), \(code.email), \(code.newEmail), \(code.createdAt),
                \(code.expiresAt), \(code.continueURL), \(new.listed?.code), \(new.listed?.link))
            """, logger: logger)
    }

    public func actionCode(digest: Data, now: Int64) async throws -> ActionCode {
        try await read { connection in try await Self.liveActionCode(digest: digest, now: now, locking: false, on: connection, logger) }
    }

    private static let actionCodeColumns = "kind, uid, email, new_email, created_at, expires_at, continue_url"

    private static func liveActionCode(
        digest: Data, now: Int64, locking: Bool, on connection: PostgresConnection, _ logger: Logger
    ) async throws -> ActionCode {
        let lock = locking ? " FOR UPDATE" : ""
        let rows = try await connection.query(
            "SELECT \(unescaped: actionCodeColumns) FROM hearth_auth_action_code WHERE digest = \(digest)\(unescaped: lock)",
            logger: logger)
        var found: ActionCode?
        for try await row in rows { found = try actionCode(row) }
        guard let found else { throw AuthError.invalidOOBCode }
        guard found.expiresAt >= now else { throw AuthError.expiredOOBCode }
        return found
    }

    public func consumeActionCode<T: Sendable>(
        digest: Data, now: Int64, account: @escaping @Sendable (ActionCode) throws -> AccountChange.Lookup?,
        apply: @escaping @Sendable (ActionCode, UserRecord?) throws -> (AccountChange, T)
    ) async throws -> T {
        let (result, recorded) = try await transaction { connection -> (T, Bool) in
            // The code's lock makes a second use wait for this one, then find the code gone.
            let code = try await Self.liveActionCode(digest: digest, now: now, locking: true, on: connection, logger)
            try await connection.query("DELETE FROM hearth_auth_action_code WHERE digest = \(digest)", logger: logger)
            let user = try await account(code).asyncMap { try await Self.user($0, lockedOn: connection, logger) } ?? nil
            let (change, result) = try apply(code, user)
            try await Self.write(change, now: now, on: connection, logger)
            guard change.isNew, let created = change.user else { return (result, false) }
            return (result, try await self.record(.created(created), on: connection))
        }
        committed(recorded)
        return result
    }

    /// Writes what using a code changes, inside its transaction (in the order SQLite's store does).
    static func write(_ change: AccountChange, now: Int64, on connection: PostgresConnection, _ logger: Logger) async throws {
        if let user = change.user {
            if change.isNew {
                try await checkUnique(user, on: connection, logger)
                try await insertRow(user, on: connection, logger)
            } else {
                try await updateRow(user, on: connection, logger)
            }
            if change.revokesSessions { try await revokeRefreshTokens(uid: user.uid, now: now, on: connection, logger) }
            if change.deletesActionCodes {
                try await connection.query("DELETE FROM hearth_auth_action_code WHERE uid = \(user.uid)", logger: logger)
            }
        }
        if let new = change.newActionCode { try await insertActionCode(new, on: connection, logger) }
    }

    public func listedActionCodes() async throws -> [ListedActionCode] {
        try await read { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.actionCodeColumns), code, link FROM hearth_auth_action_code
                WHERE code IS NOT NULL ORDER BY created_at, added
                """, logger: logger)
            var listed: [ListedActionCode] = []
            for try await row in rows {
                let columns = row.makeRandomAccess()
                guard let code = try Self.actionCode(row), let text = try columns["code"].decode(String?.self),
                    let link = try columns["link"].decode(String?.self)
                else { continue }
                listed.append(ListedActionCode(code: code, oobCode: text, link: link))
            }
            return listed
        }
    }

    public func clearListedActionCodes() async throws {
        try await read { connection in
            _ = try await connection.query("DELETE FROM hearth_auth_action_code WHERE code IS NOT NULL", logger: logger)
        }
    }

    private static func actionCode(_ row: PostgresRow) throws -> ActionCode? {
        let row = row.makeRandomAccess()
        guard let kind = ActionCode.Kind(rawValue: try row["kind"].decode(String.self)) else { return nil }
        return ActionCode(
            kind: kind, uid: try row["uid"].decode(String?.self), email: try row["email"].decode(String.self),
            newEmail: try row["new_email"].decode(String?.self), createdAt: try row["created_at"].decode(Int64.self),
            expiresAt: try row["expires_at"].decode(Int64.self), continueURL: try row["continue_url"].decode(String?.self))
    }
}

extension Optional {
    /// The value `transform` makes of the wrapped one, if there is one.
    fileprivate func asyncMap<U>(_ transform: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
