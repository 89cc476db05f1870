import Foundation
import HearthAuth
import Logging
import PostgresNIO

/// Secrets every node of a cluster must hold the same of, kept in the shared PostgreSQL: the
/// token signing key above all, so that an ID token one node signs is accepted by every other.
///
/// The first node to ask for a secret makes it; the others read that one. Whoever reads the
/// database reads the secrets: protect it as the data folder of a single node is protected.
public final class ClusterSecrets: Sendable {
    /// The name of the token signing key (PEM text).
    public static let signingKey = "auth.signing-key"

    let client: PostgresClient
    let logger: Logger

    /// - Parameter client: a running client (its `run()` is the caller's to run). Call
    ///   ``prepare()`` before anything else.
    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Makes the table when it is missing (safe to run on every node at start).
    public func prepare() async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            "CREATE TABLE IF NOT EXISTS hearth_secret (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        ])
    }

    /// The secret `name`, made with `make` and stored when there is none yet. Nodes asking at
    /// once all get the same value: only the first insert lands, and each reads what landed.
    public func loadOrCreate(name: String, make: () throws -> String) async throws -> String {
        if let value = try await value(name: name) { return value }
        let made = try make()
        try await client.query(
            "INSERT INTO hearth_secret (name, value) VALUES (\(name), \(made)) ON CONFLICT (name) DO NOTHING", logger: logger)
        guard let value = try await value(name: name) else {
            throw ClusterSecretsError("the secret \(name) was stored but cannot be read back")
        }
        return value
    }

    /// The cluster's token signing key (PEM text), made by the first node that asks.
    /// ``HearthAuth/AuthService/open(store:signingKeyPEM:projectID:policy:hasher:email:http:clock:logger:)`` takes it.
    public func signingKeyPEM() async throws -> String {
        try await loadOrCreate(name: Self.signingKey) { try TokenIssuer.newKeyPEM() }
    }

    /// The secret `name`, if there is one.
    public func value(name: String) async throws -> String? {
        let rows = try await client.query("SELECT value FROM hearth_secret WHERE name = \(name)", logger: logger)
        var value: String?
        for try await (found) in rows.decode(String.self) { value = found }
        return value
    }
}
