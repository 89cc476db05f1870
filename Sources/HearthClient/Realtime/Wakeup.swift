import Synchronization

/// A one-slot signal a task can wait on with a timeout: `signal()` wakes the waiter, or the
/// next `wait` if nobody is waiting.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns on a signal, or after `timeout` if given.
    func wait(timeout: Duration? = nil) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let generation = state.withLock { state -> Int? in
                if state.pending {
                    state.pending = false
                    return nil
                }
                state.waiter = continuation
                state.generation += 1
                return state.generation
            }
            guard let generation else { return continuation.resume() }
            guard let timeout else { return }
            Task {
                try? await Task.sleep(for: timeout)
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    guard state.generation == generation, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    return waiter
                }
                waiter?.resume()
            }
        }
    }
}
