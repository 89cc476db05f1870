import HearthCore
import NIOHTTP1

/// What a transaction's update gives back: the new value, or "leave it as it is".
public enum TransactionResult: Sendable {
    case success(DatabaseValue)
    case abort
}

extension DatabaseReference {
    /// Changes the value here from what it is now, safely against concurrent writers: `update`
    /// sees the current value and returns the new one; if someone else wrote in between, it
    /// runs again on their value (up to `maxAttempts` times). Uses the REST API's ETags
    /// (`if-match`), so the server applies the write only to the value `update` saw.
    /// - Returns: whether it was written, and the value after.
    @discardableResult
    public func runTransaction(
        maxAttempts: Int = 25, _ update: (DataSnapshot) throws -> TransactionResult
    ) async throws -> (committed: Bool, snapshot: DataSnapshot) {
        var current = try await database.send(.GET, path, headers: [("X-Firebase-ETag", "true")])
        for _ in 0..<maxAttempts {
            guard let etag = current.header("ETag") else {
                throw HearthClientError(.unexpectedResponse, "The server sent no ETag.")
            }
            let value = (try? JSONParser.parse(current.bytes).node) ?? .null
            let snapshot = DataSnapshot(ref: self, node: value)
            guard case .success(let newValue) = try update(snapshot) else { return (false, snapshot) }
            let answer = try await database.send(
                .PUT, path, headers: [("if-match", etag), ("X-Firebase-ETag", "true")], body: JSONWriter.bytes(newValue.node),
                allowing: [200, 412])
            if answer.status == 200 {
                let written = (try? JSONParser.parse(answer.bytes).node) ?? newValue.node
                return (true, DataSnapshot(ref: self, node: written))
            }
            // 412: someone else wrote first; the answer holds their value and its ETag.
            current = answer
        }
        throw HearthClientError(.transactionConflict, "The transaction gave up after \(maxAttempts) conflicting writes.")
    }

    /// A transaction on a `Codable` value: `update` changes it in place (nil: nothing there)
    /// and returns false to abort.
    @discardableResult
    public func runTransaction<T: Codable>(
        _ type: T.Type, maxAttempts: Int = 25, _ update: (inout T?) throws -> Bool
    ) async throws -> (committed: Bool, value: T?) {
        let (committed, snapshot) = try await runTransaction(maxAttempts: maxAttempts) { snapshot in
            var value: T? = snapshot.exists ? try snapshot.value(as: T.self) : nil
            guard try update(&value) else { return .abort }
            return .success(try value.map { try DatabaseValue.encoding($0) } ?? .null)
        }
        return (committed, snapshot.exists ? try snapshot.value(as: T.self) : nil)
    }
}
