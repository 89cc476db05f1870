import Synchronization

/// Resumes a continuation with the first of several outcomes that race (the later ones are
/// ignored, and ``settle(_:)`` says whether one was first). Safe from any thread.
final class FirstOutcome: Sendable {
    private let state = Mutex<CheckedContinuation<Void, any Error>?>(nil)

    init(_ continuation: CheckedContinuation<Void, any Error>) {
        state.withLock { $0 = continuation }
    }

    /// Resumes the continuation with `outcome` unless another came first.
    /// - Returns: whether this one was first.
    @discardableResult
    func settle(_ outcome: Result<Void, any Error>) -> Bool {
        guard let continuation = state.withLock({ state in
            defer { state = nil }
            return state
        }) else { return false }
        continuation.resume(with: outcome)
        return true
    }
}
