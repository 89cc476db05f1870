import HearthEngine
import ServiceLifecycle

/// Sends every open Server-Sent Events stream a `keep-alive` event on a fixed interval
/// (Firebase: about 30 s), ends streams whose credential has expired with `auth_revoked`, tells
/// realtime sessions whose credential expired (`ac`), and ends all streams and sessions when
/// the server shuts down.
struct StreamKeepAliveService: Service {
    let hub: ListenerHub
    let realtime: RealtimeService
    let longPolling: RealtimeLongPolling
    let interval: Duration
    let clock: @Sendable () -> Int64

    func run() async throws {
        await repeatUntilShutdown(every: interval) { [clock, realtime, longPolling, hub, interval] in
            let now = clock()
            // The realtime checks are spread over half the interval, not sent in one burst.
            realtime.checkSessions(now: now, spread: interval / 2)
            await longPolling.closeAbandoned(now: now)
            for listener in hub.allListeners() where listener.format == .serverSentEvents {
                if let expires = listener.expires, expires <= now {
                    listener.buffer.close(with: [SSEEncoding.authRevoked])
                } else {
                    listener.buffer.pokeKeepAlive()
                }
            }
        }
        realtime.shutDown()
        hub.shutDown()
    }
}
