import HTTPTypes
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
struct RealtimeHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        case webSocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let webSocket: RealtimeWebSocket

    init(responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration = .init(), webSocket: RealtimeWebSocket) {
        self.http1 = http1
        self.webSocket = webSocket
        self.responder = Self.redirectingLateUpgrades(responder)
    }

    /// The server builder for ``Application``'s `server:`.
    static func builder(webSocket: RealtimeWebSocket) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in RealtimeHTTPChannel(responder: responder, webSocket: webSocket) }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let webSocket = self.webSocket
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: RealtimeWebSocket.maxFrameBytes,
                shouldUpgrade: { channel, head in
                    upgradeAttempted.value = true
                    return channel.eventLoop.makeSucceededFuture(RealtimeWebSocket.handles(head.uri) ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let host = head.headers.first(name: "host")
                        try channel.pipeline.syncOperations.addHandler(webSocket.handler(for: head.uri, host: host, logger: logger))
                        return UpgradeResult.webSocket
                    }
                }
            )
            let notUpgrading = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(self.http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
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
                await Self.refuseUpgrade(http, logger: logger)
            case .webSocket:
                // The socket's handler serves it from here; this task ends.
                break
            }
        } catch {
            logger.debug("connection ended before its first request", metadata: ["error": "\(error)"])
        }
    }

    /// A WebSocket upgrade to anything but `/.ws`: `400` and close.
    private static func refuseUpgrade(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        do {
            try await http.executeThenClose { _, outbound in
                let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
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
