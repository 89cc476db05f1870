import Foundation
import GRDB

extension AccountStore {
    /// A sign-in sent to a provider.
    public typealias PendingSignIn = HearthAuth.PendingSignIn

    public func addPendingSignIn(digest: Data, _ pending: PendingSignIn, now: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM pending_sign_in WHERE expires_at < ?", arguments: [now])
            try db.execute(
                sql: """
                    INSERT INTO pending_sign_in (digest, provider_id, state, nonce, code_verifier, redirect_uri, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    digest, pending.providerID, pending.state, pending.nonce, pending.codeVerifier, pending.redirectURI,
                    pending.expiresAt,
                ])
        }
    }

    public func takePendingSignIn(digest: Data, now: Int64) async throws -> PendingSignIn? {
        try await pool.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM pending_sign_in WHERE digest = ?", arguments: [digest]) else {
                return nil
            }
            try db.execute(sql: "DELETE FROM pending_sign_in WHERE digest = ?", arguments: [digest])
            let pending = PendingSignIn(
                providerID: row["provider_id"], state: row["state"], nonce: row["nonce"], codeVerifier: row["code_verifier"],
                redirectURI: row["redirect_uri"], expiresAt: row["expires_at"])
            return pending.expiresAt >= now ? pending : nil
        }
    }
}
