import Foundation
import GRDB

extension AccountStore {
    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO service_account_key (id, client_email, public_key, token_uri, created_at, revoked_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [key.id, key.clientEmail, key.publicKeyPEM, key.tokenURI, key.createdAt, key.revokedAt])
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM service_account_key WHERE id = ?", arguments: [id]).map(Self.serviceAccountKey)
        }
    }

    public func serviceAccountKeys() async throws -> [ServiceAccountKey] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM service_account_key ORDER BY created_at, id").map(Self.serviceAccountKey)
        }
    }

    @discardableResult
    public func revokeServiceAccountKey(id: String, now: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE service_account_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [now, id])
            return db.changesCount > 0
        }
    }

    private static func serviceAccountKey(_ row: Row) -> ServiceAccountKey {
        ServiceAccountKey(
            id: row["id"], clientEmail: row["client_email"], publicKeyPEM: row["public_key"], tokenURI: row["token_uri"],
            createdAt: row["created_at"], revokedAt: row["revoked_at"])
    }
}
