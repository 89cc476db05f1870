import Foundation
import GRDB

extension AccountStore {
    /// A sign-in sent to a provider: what its return must match.
    public struct PendingSignIn: Sendable, Equatable {
        public var providerID: String
        public var state: String
        public var nonce: String
        public var codeVerifier: String
        public var redirectURI: String
        /// Milliseconds since the epoch.
        public var expiresAt: Int64

        public init(providerID: String, state: String, nonce: String, codeVerifier: String, redirectURI: String, expiresAt: Int64) {
            self.providerID = providerID
            self.state = state
            self.nonce = nonce
            self.codeVerifier = codeVerifier
            self.redirectURI = redirectURI
            self.expiresAt = expiresAt
        }
    }

    /// Records a pending sign-in under the digest of its session ID (expired ones go).
    public func addPendingSignIn(digest: Data, _ pending: PendingSignIn, now: Int64) throws {
        try pool.write { db in
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

    /// Removes and returns the unexpired pending sign-in with this digest: it can be used once.
    public func takePendingSignIn(digest: Data, now: Int64) throws -> PendingSignIn? {
        try pool.write { db in
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
