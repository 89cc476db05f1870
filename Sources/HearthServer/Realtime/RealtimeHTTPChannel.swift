import HTTPTypes
import HearthEngine
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Each connection of the main listener: HTTP/1.1 for the Hummingbird responder, or a realtime
/// WebSocket (`/.ws`) after NIO's upgrade (`NIOTypedWebSocketServerUpgrader`: the handshake and
/// the frame codec are NIOWebSocket's). An upgraded connection is served by a channel handler
/// (``RealtimeSocketHandler``) on its event loop and holds no task of its own: an idle socket is
/// only its channel, its handlers and its session.
///
/// Every connection passes ``ConnectionGate`` first (a refused one is answered and closed) and
/// is timed while it waits for its client (``ConnectionLimits``): until the first request's
/// head is in by a deadline of its own, then by ``ConnectionTimeoutHandler`` in the HTTP
/// pipeline. An upgraded WebSocket leaves both behind: the realtime protocol keeps it alive.
struct RealtimeHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        case webSocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade a trusted proxy forwarded for a client that holds its share already.
        case forwardedClientFull(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// Refused by the gate before any request (``RefusedConnectionHandler`` answers).
        case refused
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let webSocket: RealtimeWebSocket
    let gate: ConnectionGate

    init(
        responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration = .init(), webSocket: RealtimeWebSocket,
        gate: ConnectionGate
    ) {
        self.http1 = http1
        self.webSocket = webSocket
        self.gate = gate
        self.responder = Self.redirectingLateUpgrades(responder)
    }

    /// The server builder for ``Application``'s `server:`.
    static func builder(webSocket: RealtimeWebSocket, gate: ConnectionGate) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in RealtimeHTTPChannel(responder: responder, webSocket: webSocket, gate: gate) }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let gate = self.gate
            if let refusal = gate.admit(channel) {
                try channel.pipeline.syncOperations.addHandler(RefusedConnectionHandler(refusal))
                return Value(upgradeResult: channel.eventLoop.makeSucceededFuture(.refused), channel: channel)
            }
            // Until the first head is in, NIO's upgrade handler holds the connection and no HTTP
            // handler of ours is there to time it: this deadline does. It ends when the
            // connection is set up for HTTP or upgraded; an upgrade request trickling a body
            // runs into it too.
            let firstHead = channel.eventLoop.scheduleTask(in: TimeAmount(gate.limits.headerTimeout)) {
                gate.timedOut(.head)
                channel.close(promise: nil)
            }
            channel.closeFuture.whenComplete { _ in firstHead.cancel() }
            let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let forwardedClientFull = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let webSocket = self.webSocket
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: RealtimeWebSocket.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    upgradeAttempted.value = true
                    guard RealtimeWebSocket.handles(head.uri) else { return channel.eventLoop.makeSucceededFuture(nil) }
                    // A socket a proxy forwards counts against its client as long as it is open.
                    if gate.limits.maxConnectionsPerAddress != nil,
                        let client = gate.proxies.forwardedClient(
                            forwardedFor: head.headers["X-Forwarded-For"], peer: channel.remoteAddress)
                    {
                        guard let lease = gate.lease(forwardedFor: client) else {
                            forwardedClientFull.value = true
                            return channel.eventLoop.makeSucceededFuture(nil)
                        }
                        channel.closeFuture.whenComplete { _ in lease.release() }
                    }
                    return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
                },
                upgradePipelineHandler: { channel, head in
                    firstHead.cancel()
                    return channel.eventLoop.makeCompletedFuture {
                        let host = head.headers.first(name: "host")
                        try channel.pipeline.syncOperations.addHandler(webSocket.handler(for: head.uri, host: host, logger: logger))
                        return UpgradeResult.webSocket
                    }
                }
            )
            let notUpgrading = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    firstHead.cancel()
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(self.http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionTimeoutHandler(limits: gate.limits, onTimeout: gate.timedOut))
                        // Kept for graceful shutdown (closing idle connections, and busy ones
                        // after their response); the timeouts are the handler's above.
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        if forwardedClientFull.value { return .forwardedClientFull(asyncChannel) }
                        return upgradeAttempted.value ? .failedUpgrade(asyncChannel) : .notUpgraded(asyncChannel)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: notUpgrading)
            configuration.enablePipelining = false  // NIOAsyncChannel pipelines HTTP
            configuration.enableErrorHandling = false  // Hummingbird answers errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgradeResult: result, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .failedUpgrade(let http):
                await Self.refuseUpgrade(http, status: .badRequest, logger: logger)
            case .forwardedClientFull(let http):
                await Self.refuseUpgrade(http, status: .tooManyRequests, logger: logger)
            case .webSocket, .refused:
                // The socket's handler serves it from here, or the refusal was answered: this task ends.
                break
            }
        } catch {
            logger.debug("connection ended before its first request", metadata: ["error": "\(error)"])
        }
    }

    /// A WebSocket upgrade to anything but `/.ws` (`400`), or for a client a proxy forwards
    /// too much for already (`429`): answered, then closed.
    private static func refuseUpgrade(
        _ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, status: HTTPResponse.Status, logger: Logger
    ) async {
        do {
            try await http.executeThenClose { _, outbound in
                let head = HTTPResponse(status: status, headerFields: [.connection: "close", .contentLength: "0"])
                try await outbound.write(contentsOf: [.head(head), .end(nil)])
            }
        } catch {
            logger.trace("could not answer a refused upgrade", metadata: ["error": "\(error)"])
        }
    }

    /// NIO upgrades only on a connection's first request: an upgrade asked for later on a
    /// kept-alive connection is sent to the same URL on a new connection (307, then close).
    private static func redirectingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct CloseAfterRedirect: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            let target = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: target]))
            throw CloseAfterRedirect()
        }
    }
}
