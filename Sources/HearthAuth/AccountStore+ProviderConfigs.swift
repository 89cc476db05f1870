import Foundation
import GRDB
import HearthCore

extension AccountStore {
    public func putProviderConfig(_ config: ProviderConfig, create: Bool, now: Int64) async throws {
        try await pool.write { db in
            let exists = try Row.fetchOne(db, sql: "SELECT 1 FROM provider_config WHERE id = ?", arguments: [config.id]) != nil
            if create, exists { throw AuthError("CONFIGURATION_EXISTS") }
            if !create, !exists { throw AuthError.configurationNotFound }
            try db.execute(
                sql: """
                    INSERT INTO provider_config (id, resource, created_at) VALUES (?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET resource = excluded.resource
                    """,
                arguments: [config.id, JSONWriter.string(config.resource), now])
        }
    }

    public func providerConfig(id: String) async throws -> ProviderConfig? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM provider_config WHERE id = ?", arguments: [id]).flatMap(Self.providerConfig)
        }
    }

    public func providerConfigs(kind: ProviderConfig.Kind?, after: String?, limit: Int) async throws -> [ProviderConfig] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM provider_config WHERE id > ? ORDER BY id", arguments: [after ?? ""])
                .compactMap(Self.providerConfig).filter { kind == nil || $0.kind == kind }.prefix(limit).map { $0 }
        }
    }

    @discardableResult
    public func deleteProviderConfig(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM provider_config WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    private static func providerConfig(_ row: Row) -> ProviderConfig? {
        let id: String = row["id"]
        guard let kind = ProviderConfig.Kind(providerID: id) else { return nil }
        return ProviderConfig(id: id, kind: kind, resource: json(row["resource"]))
    }
}
