import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` in one transaction, again from the start when it lost a race to another
    /// transaction (a unique violation, a deadlock, a serialization failure) up to `attempts`
    /// times: its checks then see the winner. Then the last error is thrown.
    ///
    /// Unlike `withTransaction`, errors of `body` come out as they are (not wrapped), so a
    /// refusal thrown inside reaches the caller unchanged.
    func retryingTransaction<T: Sendable>(
        attempts: Int = 5, logger: Logger, _ body: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: logger)
                        return result
                    } catch {
                        // A failed statement leaves the transaction aborted: end it before the
                        // connection goes back to the pool.
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                }
            } catch let error as PSQLError where Self.lostRace(error) && attempt < attempts {
                attempt += 1
            }
        }
    }

    /// True for an error another transaction's commit caused (trying again can succeed or
    /// refuse properly).
    static func lostRace(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        // unique_violation, serialization_failure, deadlock_detected
        return state == "23505" || state == "40001" || state == "40P01"
    }
}
