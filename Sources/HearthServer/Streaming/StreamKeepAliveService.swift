import ServiceLifecycle

/// Sends every open stream a `keep-alive` event on a fixed interval (Firebase: about 30 s),
/// and ends all streams when the server shuts down.
struct StreamKeepAliveService: Service {
    let hub: ListenerHub
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                for listener in hub.allListeners() { listener.buffer.pokeKeepAlive() }
            }
        }
        for listener in hub.allListeners() { listener.buffer.close() }
    }
}
