import Synchronization

/// A write made on this device: already shown to listeners, saved, and sent (now or when the
/// connection returns). Await ``acknowledged()`` for the server's answer; ignore it to work
/// offline-first (a refused write is taken back from listeners either way).
public struct DatabaseWrite: Sendable {
    /// Where the server's answer arrives, once.
    final class Receipt: Sendable {
        private let state = Mutex<(outcome: Result<Void, HearthClientError>?, waiters: [CheckedContinuation<Void, any Error>])>(
            (nil, []))

        func finish(_ outcome: Result<Void, HearthClientError>) {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                guard state.outcome == nil else { return [] }
                state.outcome = outcome
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(with: outcome.mapError { $0 as any Error }) }
        }

        func wait() async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, HearthClientError>? in
                    if state.outcome == nil { state.waiters.append(continuation) }
                    return state.outcome
                }
                if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
            }
        }

        var outcome: Result<Void, HearthClientError>? { state.withLock { $0.outcome } }
    }

    private let receipt: Receipt
    /// Keeps the database (and its connection) alive while someone may wait for the answer.
    private let database: Database?

    init(receipt: Receipt, database: Database) {
        self.receipt = receipt
        self.database = database
    }

    init(outcome: Result<Void, HearthClientError>) {
        receipt = Receipt()
        receipt.finish(outcome)
        database = nil
    }

    /// Waits for the server to accept the write.
    /// - Throws: ``HearthClientError`` when it refused it (rules, invalid data).
    public func acknowledged() async throws {
        try await receipt.wait()
    }

    /// True once the server has answered (either way).
    public var isAcknowledged: Bool { receipt.outcome != nil }
}
