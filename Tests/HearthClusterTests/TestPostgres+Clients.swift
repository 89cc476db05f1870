import HearthTesting
import Logging
import PostgresNIO

extension TestPostgres {
    /// Runs `body` with `count` running clients (one pool each, as separate nodes would have)
    /// on a new PostgreSQL, stopped afterwards.
    static func withClients(
        _ count: Int, logger: Logger = ClusterLogTests.logger, _ body: ([PostgresClient]) async throws -> Void
    ) async throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let clients = (0..<count).map { _ in
            PostgresClient(
                configuration: PostgresClient.Configuration(
                    host: "127.0.0.1", port: postgres.port, username: postgres.user, password: nil, database: postgres.database,
                    tls: .disable),
                backgroundLogger: logger)
        }
        try await withThrowingDiscardingTaskGroup { group in
            for client in clients { group.addTask { await client.run() } }
            try await body(clients)
            group.cancelAll()
        }
    }
}
