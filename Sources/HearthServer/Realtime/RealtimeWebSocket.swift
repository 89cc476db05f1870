import HearthCore
import HearthEngine
import HummingbirdCore
import Logging

/// The realtime protocol over WebSocket at `/.ws` (docs/protocol.md §2.2, §3): which requests upgrade
/// (``RealtimeHTTPChannel`` does the upgrade), and the handler each socket gets: a new session
/// on the database its URL names, or, with `s=`, the takeover of a long-polling session.
struct RealtimeWebSocket: Sendable {
    static let path = "/.ws"
    /// The largest WebSocket frame accepted: a 16,384-character chunk in UTF-8, with room.
    static let maxFrameBytes = 1 << 16

    let service: RealtimeService
    let longPolling: RealtimeLongPolling
    /// The database for a connection whose URL names none (`ns`) and whose host has no
    /// database label.
    let defaultDatabase: String
    /// Where sockets wait to be written, per event loop.
    let drainQueues = SocketDrainQueues()

    /// True for `/.ws` and `/.ws?…`.
    static func handles(_ target: String) -> Bool {
        target == path || target.hasPrefix(path + "?")
    }

    /// The handler of a socket upgraded from a request for `target` to `host`.
    func handler(for target: String, host: String?, logger: Logger) -> RealtimeSocketHandler {
        // The SDKs send `v`, `ns`, `p`, `ls`, `s`, `ac`; `ns` and `s` matter.
        let parameters = URI(target).firstQueryParameters
        let host = host ?? "localhost"
        let start: RealtimeSocketHandler.Start
        if let sessionID = parameters["s"] {
            start = .upgrade(sessionID: sessionID, host: host)
        } else {
            start = .open(database: parameters["ns"] ?? DatabaseResponder.databaseName(host: host) ?? defaultDatabase, host: host)
        }
        return RealtimeSocketHandler(
            start: start, service: service, longPolling: longPolling, drainQueues: drainQueues, logger: logger)
    }
}
