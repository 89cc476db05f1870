import Synchronization

/// Runs `work` and returns what it returns, or nil when `limit` passes first or the caller is
/// cancelled. The work is then cancelled and not waited for: work that ignores cancellation
/// (someone else's function) can keep running on its own, but never holds the caller.
public func firstWithin<T: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () async -> T) async -> T? {
    let race = Mutex(TimeLimitRace<T>())
    let finish: @Sendable (T?) -> Void = { value in race.withLock { $0.continuation.take() }?.resume(returning: value) }
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let cancelled = race.withLock { race in
                race.continuation = continuation
                return race.cancelled
            }
            guard !cancelled else { return finish(nil) }
            let worker = Task { await work() }
            race.withLock { $0.worker = worker }
            let timer = Task {
                try? await Task.sleep(for: limit)
                worker.cancel()
                finish(nil)
            }
            Task {
                finish(await worker.value)
                timer.cancel()
            }
        }
    } onCancel: {
        let worker = race.withLock { race in
            race.cancelled = true
            return race.worker
        }
        worker?.cancel()
        finish(nil)
    }
}

/// The state ``firstWithin(_:_:)`` shares between the caller, the work, the timer and a
/// cancellation: whoever comes first resumes the caller, once.
struct TimeLimitRace<T: Sendable>: Sendable {
    var continuation: CheckedContinuation<T?, Never>?
    var worker: Task<T, Never>?
    var cancelled = false
}
