import ServiceLifecycle

/// Runs `work` every `interval` until the server begins a graceful shutdown (or the task is
/// cancelled): the loop of the services that tend the server on a clock (keep-alives, idle
/// databases, expired uploads).
public func repeatUntilShutdown(every interval: Duration, _ work: @escaping @Sendable () async -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            await work()
        }
    }
}
