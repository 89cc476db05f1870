import ServiceLifecycle

/// Sends every open stream a `keep-alive` event on a fixed interval (Firebase: about 30 s),
/// ends streams whose credential has expired with `auth_revoked`, and ends all streams when
/// the server shuts down.
struct StreamKeepAliveService: Service {
    let hub: ListenerHub
    let interval: Duration
    let clock: @Sendable () -> Int64

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                let now = clock()
                for listener in hub.allListeners() {
                    if let expires = listener.expires, expires <= now {
                        listener.buffer.close(with: [SSEEncoding.authRevoked])
                    } else {
                        listener.buffer.pokeKeepAlive()
                    }
                }
            }
        }
        hub.shutDown()
    }
}
