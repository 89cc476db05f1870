import HearthEngine
import Logging
import NIOCore
import Synchronization

/// Admits connections, and requests that trusted proxies forward, within ``ConnectionLimits``:
/// one gate per server, shared by its listeners (descriptors are the process's, whichever
/// port a connection came in on).
///
/// A trusted proxy (``ProxyTrust``) speaks for many clients, so its connections count only
/// toward the server's total; each request it forwards with `X-Forwarded-For` counts against
/// the forwarded client's address instead, for as long as its response (a stream's included)
/// is being written, or for a WebSocket as long as the socket is open. The same cap applies
/// to both: a client holds at most ``ConnectionLimits/maxConnectionsPerAddress`` connections,
/// or requests in flight through a proxy.
///
/// Threading: a lock guards the counts, held only to count one connection in or out.
final class ConnectionGate: Sendable {
    let limits: ConnectionLimits
    let proxies: ProxyTrust
    private let counts: Mutex<ConnectionCounts>
    private let metrics: ServerMetrics
    private let logger: Logger

    /// - Parameter maxConnections: the server's cap, resolved (``ConnectionLimits/resolvedMaxConnections()``).
    init(limits: ConnectionLimits, maxConnections: Int?, proxies: ProxyTrust, metrics: ServerMetrics, logger: Logger) {
        self.limits = limits
        self.proxies = proxies
        self.metrics = metrics
        self.logger = logger
        counts = Mutex(ConnectionCounts(maxConnections: maxConnections, maxPerAddress: limits.maxConnectionsPerAddress))
    }

    /// Counts a newly accepted connection in, or says why it is refused. An admitted one is
    /// counted out when it closes.
    func admit(_ channel: any Channel) -> ConnectionCounts.Refusal? {
        let peer = channel.remoteAddress
        let address = proxies.trusts(peer) ? nil : peer?.ipAddress
        if let refusal = counts.withLock({ $0.openConnection(from: address) }) {
            let reason = refusal == .serverFull ? "server_full" : "address_full"
            metrics.connectionRefused(reason: reason)
            logger.debug("connection refused", metadata: ["reason": "\(reason)", "peer": "\(peer?.ipAddress ?? "unknown")"])
            return refusal
        }
        channel.closeFuture.whenComplete { _ in
            self.counts.withLock { $0.closeConnection(from: address) }
        }
        return nil
    }

    /// A place for one more request forwarded for `client`, or nil when that client already
    /// has as many in flight as it may.
    func lease(forwardedFor client: String) -> ForwardedLease? {
        if counts.withLock({ $0.startForwarded(for: client) }) != nil {
            metrics.connectionRefused(reason: "forwarded_full")
            logger.debug("forwarded request refused", metadata: ["client": "\(client)"])
            return nil
        }
        return ForwardedLease { self.counts.withLock { $0.endForwarded(for: client) } }
    }

    /// A connection closed for taking too long over `phase` (`head`, `body`, `idle`).
    func timedOut(_ phase: ConnectionTimeouts.Phase) {
        metrics.connectionTimedOut(phase: phase.rawValue)
    }
}
