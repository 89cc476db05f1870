import Foundation
import HearthAuth
import HearthCore
import PostgresNIO

extension PostgresAccountStore {
    // MARK: - Pending provider sign-ins

    public func addPendingSignIn(digest: Data, _ pending: PendingSignIn, now: Int64) async throws {
        try await transaction { connection in
            try await connection.query("DELETE FROM hearth_auth_pending_sign_in WHERE expires_at < \(now)", logger: logger)
            try await connection.query(
                """
                INSERT INTO hearth_auth_pending_sign_in (digest, provider_id, state, nonce, code_verifier, redirect_uri, expires_at)
                VALUES (\(digest), \(pending.providerID), \(pending.state), \(pending.nonce), \(pending.codeVerifier),
                    \(pending.redirectURI), \(pending.expiresAt))
                """, logger: logger)
        }
    }

    public func takePendingSignIn(digest: Data, now: Int64) async throws -> PendingSignIn? {
        // One statement removes and returns it: of two takers, one gets the row.
        try await read { connection in
            let rows = try await connection.query(
                """
                DELETE FROM hearth_auth_pending_sign_in WHERE digest = \(digest)
                RETURNING provider_id, state, nonce, code_verifier, redirect_uri, expires_at
                """, logger: logger)
            var taken: PendingSignIn?
            for try await (provider, state, nonce, verifier, redirect, expiresAt) in rows.decode(
                (String, String, String, String, String, Int64).self)
            {
                taken = PendingSignIn(
                    providerID: provider, state: state, nonce: nonce, codeVerifier: verifier, redirectURI: redirect,
                    expiresAt: expiresAt)
            }
            guard let taken, taken.expiresAt >= now else { return nil }
            return taken
        }
    }

    // MARK: - Provider configurations

    public func putProviderConfig(_ config: ProviderConfig, create: Bool, now: Int64) async throws {
        let resource = JSONWriter.string(config.resource)
        try await read { connection in
            // One statement each, so the check and the write cannot be split by another node's.
            if create {
                let added = try await Self.exists(
                    on: connection,
                    """
                    INSERT INTO hearth_auth_provider_config (id, resource, created_at) VALUES (\(config.id), \(resource), \(now))
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """, logger)
                guard added else { throw AuthError("CONFIGURATION_EXISTS") }
            } else {
                let updated = try await Self.exists(
                    on: connection,
                    "UPDATE hearth_auth_provider_config SET resource = \(resource) WHERE id = \(config.id) RETURNING 1", logger)
                guard updated else { throw AuthError.configurationNotFound }
            }
        }
    }

    public func providerConfig(id: String) async throws -> ProviderConfig? {
        try await providerConfigs("SELECT id, resource FROM hearth_auth_provider_config WHERE id = \(id)").first
    }

    public func providerConfigs(kind: ProviderConfig.Kind?, after: String?, limit: Int) async throws -> [ProviderConfig] {
        let after = after ?? ""
        return try await providerConfigs("SELECT id, resource FROM hearth_auth_provider_config WHERE id > \(after) ORDER BY id")
            .filter { kind == nil || $0.kind == kind }.prefix(limit).map { $0 }
    }

    @discardableResult
    public func deleteProviderConfig(id: String) async throws -> Bool {
        try await read { connection in
            try await Self.exists(on: connection, "DELETE FROM hearth_auth_provider_config WHERE id = \(id) RETURNING 1", logger)
        }
    }

    private func providerConfigs(_ query: PostgresQuery) async throws -> [ProviderConfig] {
        try await read { connection in
            var configs: [ProviderConfig] = []
            for try await (id, resource) in try await connection.query(query, logger: logger).decode((String, String).self) {
                guard let kind = ProviderConfig.Kind(providerID: id) else { continue }
                configs.append(ProviderConfig(id: id, kind: kind, resource: Self.json(resource)))
            }
            return configs
        }
    }
}
