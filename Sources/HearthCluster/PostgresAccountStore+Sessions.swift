import Foundation
import HearthAuth
import Logging
import PostgresNIO

extension PostgresAccountStore {
    public func addRefreshToken(digest: Data, _ session: RefreshTokenRecord) async throws {
        let claims = Self.claimsText(session.claims)
        try await read { connection in
            _ = try await connection.query(
                """
                INSERT INTO hearth_auth_refresh_token (digest, uid, created_at, provider, claims)
                VALUES (\(digest), \(session.uid), \(session.createdAt), \(session.provider), \(claims))
                """, logger: logger)
        }
    }

    public func refreshToken(digest: Data) async throws -> RefreshTokenRecord? {
        try await read { connection in
            let rows = try await connection.query(
                "SELECT uid, created_at, provider, claims, revoked_at FROM hearth_auth_refresh_token WHERE digest = \(digest)",
                logger: logger)
            var token: RefreshTokenRecord?
            for try await (uid, createdAt, provider, claims, revokedAt) in rows.decode((String, Int64, String?, String?, Int64?).self) {
                token = RefreshTokenRecord(uid: uid, createdAt: createdAt, provider: provider, claims: Self.json(claims))
                token?.revoked = revokedAt != nil
            }
            return token
        }
    }

    @discardableResult
    public func revokeRefreshToken(digest: Data, uid: String) async throws -> Bool {
        try await read { connection in
            try await Self.exists(
                on: connection, "DELETE FROM hearth_auth_refresh_token WHERE digest = \(digest) AND uid = \(uid) RETURNING 1", logger)
        }
    }

    public func recordRefresh(uid: String, at time: Int64) async throws {
        _ = try await client.query("UPDATE hearth_auth_user SET last_refresh_at = \(time) WHERE uid = \(uid)", logger: logger)
    }

    public func revokeRefreshTokens(uid: String, now: Int64) async throws {
        try await transaction { connection in try await Self.revokeRefreshTokens(uid: uid, now: now, on: connection, logger) }
    }

    /// How long a revoked session is remembered (milliseconds), as SQLite's store does.
    static let revokedSessionMemory: Int64 = 30 * 24 * 3_600_000

    static func revokeRefreshTokens(uid: String, now: Int64, on connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query(
            "UPDATE hearth_auth_refresh_token SET revoked_at = \(now) WHERE uid = \(uid) AND revoked_at IS NULL", logger: logger)
        let forgotten = now - revokedSessionMemory
        try await connection.query("DELETE FROM hearth_auth_refresh_token WHERE revoked_at < \(forgotten)", logger: logger)
    }
}
