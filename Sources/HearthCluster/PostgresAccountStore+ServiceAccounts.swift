import HearthAuth
import PostgresNIO

extension PostgresAccountStore {
    public func addServiceAccountKey(_ key: ServiceAccountKey) async throws {
        try await read { connection in
            try await connection.query(
                """
                INSERT INTO hearth_auth_service_account_key (id, client_email, public_key, token_uri, created_at, revoked_at)
                VALUES (\(key.id), \(key.clientEmail), \(key.publicKeyPEM), \(key.tokenURI), \(key.createdAt), \(key.revokedAt))
                """, logger: logger)
        }
    }

    public func serviceAccountKey(id: String) async throws -> ServiceAccountKey? {
        try await serviceAccountKeys(
            "SELECT id, client_email, public_key, token_uri, created_at, revoked_at FROM hearth_auth_service_account_key WHERE id = \(id)"
        ).first
    }

    public func serviceAccountKeys() async throws -> [ServiceAccountKey] {
        try await serviceAccountKeys(
            "SELECT id, client_email, public_key, token_uri, created_at, revoked_at FROM hearth_auth_service_account_key ORDER BY created_at, id")
    }

    @discardableResult
    public func revokeServiceAccountKey(id: String, now: Int64) async throws -> Bool {
        try await read { connection in
            try await Self.exists(
                on: connection,
                "UPDATE hearth_auth_service_account_key SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING 1",
                logger)
        }
    }

    private func serviceAccountKeys(_ query: PostgresQuery) async throws -> [ServiceAccountKey] {
        try await read { connection in
            var keys: [ServiceAccountKey] = []
            let rows = try await connection.query(query, logger: logger).decode((String, String, String, String, Int64, Int64?).self)
            for try await (id, email, publicKey, tokenURI, created, revoked) in rows {
                keys.append(ServiceAccountKey(
                    id: id, clientEmail: email, publicKeyPEM: publicKey, tokenURI: tokenURI, createdAt: created, revokedAt: revoked))
            }
            return keys
        }
    }
}
