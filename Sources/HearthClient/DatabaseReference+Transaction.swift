import HearthCore
import Synchronization

/// What a transaction's update gives back: the new value, or "leave it as it is".
public enum TransactionResult: Sendable {
    case success(DatabaseValue)
    case abort
}

extension DatabaseReference {
    /// Changes the value here from what it is now, safely against concurrent writers, as
    /// Firebase's transactions do: `update` runs on the value this device holds, its result
    /// shows at once (unless `applyLocally` is false), and the server takes it only if its own
    /// value is the one `update` saw (the value's hash); if another writer got there first, the
    /// server's newer value arrives and `update` runs again on it (up to 25 times).
    /// `update` may run several times and must not have side effects.
    /// - Returns: whether it was written, and the value after.
    /// - Throws: what `update` threw, or ``HearthClientError`` (`transactionConflict` after too
    ///   many conflicts, `permissionDenied`, …).
    @discardableResult
    public func runTransaction(
        applyLocally: Bool = true, _ update: @escaping @Sendable (DataSnapshot) throws -> TransactionResult
    ) async throws -> (committed: Bool, snapshot: DataSnapshot) {
        let thrown = Mutex<(any Error)?>(nil)
        let ref = self
        let outcome = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(committed: Bool, value: Node), any Error>) in
            database.engine.transaction(at: path, applyLocally: applyLocally, update: { node in
                do {
                    guard case .success(let value) = try update(DataSnapshot(ref: ref, node: node)) else { return nil }
                    return value.node
                } catch {
                    thrown.withLock { $0 = error }
                    return nil
                }
            }, completion: { continuation.resume(with: $0.mapError { $0 as any Error }) })
        }
        if let error = thrown.withLock({ $0 }) { throw error }
        return (outcome.committed, DataSnapshot(ref: self, node: outcome.value))
    }

    /// A transaction on a `Codable` value: `update` changes it in place (nil: nothing there)
    /// and returns false to abort.
    @discardableResult
    public func runTransaction<T: Codable & Sendable>(
        _ type: T.Type, _ update: @escaping @Sendable (inout T?) throws -> Bool
    ) async throws -> (committed: Bool, value: T?) {
        let (committed, snapshot) = try await runTransaction { snapshot in
            var value: T? = snapshot.exists ? try snapshot.value(as: T.self) : nil
            guard try update(&value) else { return .abort }
            return .success(try value.map { try DatabaseValue.encoding($0) } ?? .null)
        }
        return (committed, snapshot.exists ? try snapshot.value(as: T.self) : nil)
    }
}
