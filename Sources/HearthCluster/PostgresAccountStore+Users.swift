import Foundation
import HearthAuth
import HearthCore
import Logging
import PostgresNIO

extension PostgresAccountStore {
    public func insert(_ user: UserRecord) async throws {
        committed(try await transaction { connection in
            if try await Self.exists(on: connection, "SELECT 1 FROM hearth_auth_user WHERE uid = \(user.uid)", logger) {
                throw AuthError.duplicateLocalID
            }
            try await Self.checkUnique(user, on: connection, logger)
            try await Self.insertRow(user, on: connection, logger)
            return try await self.record(.created(user), on: connection)
        })
    }

    public func replace(_ user: UserRecord) async throws {
        try await transaction { connection in
            try await Self.checkUnique(user, on: connection, logger)
            let exists = try await Self.exists(
                on: connection, "SELECT 1 FROM hearth_auth_user WHERE uid = \(user.uid) FOR UPDATE", logger)
            guard exists else { return try await Self.insertRow(user, on: connection, logger) }
            // The old account goes with what hangs on it, as SQLite's delete-and-insert does, but
            // its row is rewritten in place: a transaction waiting on its lock then finds the new
            // account rather than none.
            try await connection.query("DELETE FROM hearth_auth_refresh_token WHERE uid = \(user.uid)", logger: logger)
            try await connection.query("DELETE FROM hearth_auth_action_code WHERE uid = \(user.uid)", logger: logger)
            try await Self.updateRow(user, on: connection, logger)
        }
    }

    public func update(_ user: UserRecord) async throws {
        try await transaction { connection in try await Self.updateRow(user, on: connection, logger) }
    }

    public func modify<T: Sendable>(
        uid: String, _ change: @escaping @Sendable (inout UserRecord) throws -> T
    ) async throws -> (user: UserRecord, result: T) {
        try await transaction { connection in
            // The row's lock makes a concurrent modify wait, then read what this one wrote.
            guard var user = try await Self.user(.uid(uid), lockedOn: connection, logger) else { throw AuthError.userNotFound }
            let result = try change(&user)
            try await Self.updateRow(user, on: connection, logger)
            return (user, result)
        }
    }

    public func user(uid: String) async throws -> UserRecord? {
        try await users("SELECT \(unescaped: Self.userColumns) FROM hearth_auth_user u WHERE u.uid = \(uid)").first
    }

    public func user(email: String) async throws -> UserRecord? {
        let address = email.lowercased()
        return try await users("SELECT \(unescaped: Self.userColumns) FROM hearth_auth_user u WHERE u.email = \(address)").first
    }

    public func user(phoneNumber: String) async throws -> UserRecord? {
        try await users("SELECT \(unescaped: Self.userColumns) FROM hearth_auth_user u WHERE u.phone_number = \(phoneNumber)").first
    }

    public func user(providerID: String, rawID: String) async throws -> UserRecord? {
        try await users(
            """
            SELECT \(unescaped: Self.userColumns) FROM hearth_auth_identity l JOIN hearth_auth_user u ON u.uid = l.uid
            WHERE l.provider_id = \(providerID) AND l.raw_id = \(rawID)
            """
        ).first
    }

    public func users(after: String?, limit: Int) async throws -> [UserRecord] {
        let after = after ?? ""
        return try await users(
            "SELECT \(unescaped: Self.userColumns) FROM hearth_auth_user u WHERE u.uid > \(after) ORDER BY u.uid LIMIT \(limit)")
    }

    public func search(_ text: String, disabled: Bool?, after: String?, limit: Int) async throws -> [UserRecord] {
        let pattern = Self.likePattern(text)
        let after = after ?? ""
        // As SQLite's LIKE: ASCII letters match either case, other characters only themselves
        // (lower() in the C collation lowers ASCII letters only; the pattern is lower-cased).
        return try await users(
            """
            SELECT \(unescaped: Self.userColumns) FROM hearth_auth_user u
            WHERE u.uid > \(after)
                AND (lower(u.uid COLLATE "C") LIKE \(pattern) ESCAPE '\\'
                    OR lower(u.email COLLATE "C") LIKE \(pattern) ESCAPE '\\'
                    OR lower(u.display_name COLLATE "C") LIKE \(pattern) ESCAPE '\\'
                    OR lower(u.phone_number COLLATE "C") LIKE \(pattern) ESCAPE '\\')
                AND (\(disabled)::boolean IS NULL OR u.disabled = \(disabled)::boolean)
            ORDER BY u.uid LIMIT \(limit)
            """)
    }

    /// The `LIKE` pattern (escaped with a backslash) for text found anywhere, lower-cased.
    static func likePattern(_ text: String) -> String {
        "%" + text.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    public func count() async throws -> Int {
        try await read { connection in
            let rows = try await connection.query("SELECT count(*) FROM hearth_auth_user", logger: logger)
            var count = 0
            for try await (value) in rows.decode(Int.self) { count = value }
            return count
        }
    }

    @discardableResult
    public func delete(uid: String) async throws -> Bool {
        guard recorder != nil else {
            return try await read { connection in
                try await Self.exists(on: connection, "DELETE FROM hearth_auth_user WHERE uid = \(uid) RETURNING 1", logger)
            }
        }
        // With account triggers, the account as it was goes into the event of its deletion.
        let (deleted, recorded) = try await transaction { connection -> (Bool, Bool) in
            guard let user = try await Self.user(.uid(uid), lockedOn: connection, logger) else { return (false, false) }
            try await connection.query("DELETE FROM hearth_auth_user WHERE uid = \(uid)", logger: logger)
            return (true, try await self.record(.deleted(user), on: connection))
        }
        committed(recorded)
        return deleted
    }

    // MARK: - Inside transactions

    /// The accounts `query` (selecting ``userColumns``) finds.
    func users(_ query: PostgresQuery) async throws -> [UserRecord] {
        try await read { connection in try await Self.users(query, on: connection, logger) }
    }

    static func users(_ query: PostgresQuery, on connection: PostgresConnection, _ logger: Logger) async throws -> [UserRecord] {
        var users: [UserRecord] = []
        for try await row in try await connection.query(query, logger: logger) { users.append(try record(row)) }
        return users
    }

    /// The account `lookup` names, locked until the transaction ends.
    static func user(
        _ lookup: AccountChange.Lookup, lockedOn connection: PostgresConnection, _ logger: Logger
    ) async throws -> UserRecord? {
        // Locked first, then read: under read committed the read sees the latest version.
        let lock: PostgresQuery =
            switch lookup {
            case .uid(let uid): "SELECT uid FROM hearth_auth_user WHERE uid = \(uid) FOR UPDATE"
            case .email(let email): "SELECT uid FROM hearth_auth_user WHERE email = \(email) FOR UPDATE"
            }
        var uid: String?
        for try await (found) in try await connection.query(lock, logger: logger).decode(String.self) { uid = found }
        guard let uid else { return nil }
        return try await users(
            "SELECT \(unescaped: userColumns) FROM hearth_auth_user u WHERE u.uid = \(uid)", on: connection, logger
        ).first
    }

    /// True when `query` gives a row.
    static func exists(on connection: PostgresConnection, _ query: PostgresQuery, _ logger: Logger) async throws -> Bool {
        var found = false
        for try await _ in try await connection.query(query, logger: logger) { found = true }
        return found
    }

    /// Throws when another account (not `user.uid`) has `user`'s email, phone number or a linked identity.
    static func checkUnique(_ user: UserRecord, on connection: PostgresConnection, _ logger: Logger) async throws {
        if let email = user.email,
            try await exists(
                on: connection, "SELECT 1 FROM hearth_auth_user WHERE email = \(email) AND uid <> \(user.uid)", logger)
        {
            throw AuthError.emailExists
        }
        if let phone = user.phoneNumber,
            try await exists(
                on: connection, "SELECT 1 FROM hearth_auth_user WHERE phone_number = \(phone) AND uid <> \(user.uid)", logger)
        {
            throw AuthError.phoneNumberExists
        }
        for identity in user.identities {
            if try await exists(
                on: connection,
                """
                SELECT 1 FROM hearth_auth_identity
                WHERE provider_id = \(identity.providerID) AND raw_id = \(identity.rawID) AND uid <> \(user.uid)
                """, logger)
            {
                throw AuthError.federatedUserIDAlreadyLinked
            }
        }
    }

    static func insertRow(_ user: UserRecord, on connection: PostgresConnection, _ logger: Logger) async throws {
        let claims = claimsText(user.customClaims)
        try await connection.query(
            """
            INSERT INTO hearth_auth_user (uid, email, email_verified, display_name, photo_url, password_hash, disabled,
                custom_claims, provider, created_at, last_login_at, valid_since, phone_number, password_updated_at,
                email_link_sign_in, last_refresh_at)
            VALUES (\(user.uid), \(user.email), \(user.emailVerified), \(user.displayName), \(user.photoURL),
                \(user.passwordHash), \(user.disabled), \(claims), \(user.provider), \(user.createdAt), \(user.lastLoginAt),
                \(user.validSince), \(user.phoneNumber), \(user.passwordUpdatedAt), \(user.emailLinkSignIn), \(user.lastRefreshAt))
            """, logger: logger)
        try await writeIdentities(user, on: connection, logger)
    }

    /// Replaces an existing account's fields inside a transaction.
    static func updateRow(_ user: UserRecord, on connection: PostgresConnection, _ logger: Logger) async throws {
        try await checkUnique(user, on: connection, logger)
        let claims = claimsText(user.customClaims)
        let updated = try await exists(
            on: connection,
            """
            UPDATE hearth_auth_user SET email = \(user.email), email_verified = \(user.emailVerified),
                display_name = \(user.displayName), photo_url = \(user.photoURL), password_hash = \(user.passwordHash),
                disabled = \(user.disabled), custom_claims = \(claims), provider = \(user.provider),
                created_at = \(user.createdAt), last_login_at = \(user.lastLoginAt), valid_since = \(user.validSince),
                phone_number = \(user.phoneNumber), password_updated_at = \(user.passwordUpdatedAt),
                email_link_sign_in = \(user.emailLinkSignIn)
            WHERE uid = \(user.uid)
            RETURNING 1
            """, logger)
        guard updated else { throw AuthError.userNotFound }
        try await writeIdentities(user, on: connection, logger)
    }

    static func writeIdentities(_ user: UserRecord, on connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM hearth_auth_identity WHERE uid = \(user.uid)", logger: logger)
        for (position, identity) in user.identities.enumerated() {
            try await connection.query(
                """
                INSERT INTO hearth_auth_identity (provider_id, raw_id, uid, email, display_name, photo_url, position)
                VALUES (\(identity.providerID), \(identity.rawID), \(user.uid), \(identity.email), \(identity.displayName),
                    \(identity.photoURL), \(Int32(position)))
                """, logger: logger)
        }
    }
}
