import HearthEngine
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Hummingbird's HTTP/1 channel within ``ConnectionLimits``: for the listeners other than the
/// main one (the files port, the metrics port). A connection ``ConnectionGate`` refuses is
/// answered and closed (``RefusedConnectionHandler``); an admitted one gets
/// ``ConnectionTimeoutHandler`` among Hummingbird's additional channel handlers.
struct LimitedHTTP1Channel: ServerChildChannel {
    enum Value: ServerChildChannelValue {
        case admitted(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case refused(any Channel)

        var channel: any Channel {
            switch self {
            case .admitted(let http): http.channel
            case .refused(let channel): channel
            }
        }
    }

    let http1: HTTP1Channel
    let gate: ConnectionGate

    /// The server builder for ``Application``'s `server:`.
    static func builder(gate: ConnectionGate) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let configuration = HTTP1Channel.Configuration(additionalChannelHandlers: [
                ConnectionTimeoutHandler(limits: gate.limits, onTimeout: gate.timedOut)
            ])
            return LimitedHTTP1Channel(http1: HTTP1Channel(responder: responder, configuration: configuration), gate: gate)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let refusal = gate.admit(channel) {
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(refusal))
                return .refused(channel)
            }
        }
        return http1.setup(channel: channel, logger: logger).map { .admitted($0) }
    }

    func handle(value: Value, logger: Logger) async {
        guard case .admitted(let http) = value else { return }
        await http1.handle(value: http, logger: logger)
    }
}
