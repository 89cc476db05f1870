import HearthCore
import HearthEngine
import HearthProtocol
import HearthStore
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// One realtime WebSocket, as a channel handler after NIO's upgrade (frames decoded and encoded
/// by NIOWebSocket): text frames are reassembled (``RealtimeFrameAssembler``), parsed
/// (``RealtimeClientMessage``) and handed to the session in order (``RealtimeSession/deliver``);
/// what the session queues is written when its queue says it is ready, each message as its
/// frames (``RealtimeFrames``), sharing an event's bytes with every other socket, with one flush
/// per batch.
///
/// Threading: everything here runs on the channel's event loop; the session's queue calls back
/// from any thread, and the call hops onto the loop. No task waits for an idle socket. A socket
/// whose peer's kernel stops taking data stops being written (NIO's writability) while its
/// session's bounded queue fills; past the bound the socket is closed.
final class RealtimeSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    enum Start {
        /// A new session on a database.
        case open(database: String, host: String)
        /// The upgrade of a long-polling session (`s=`).
        case upgrade(sessionID: String, host: String)
    }

    private enum Mode {
        case starting
        /// Waiting for the database to load (a cluster node opening it); requests wait here.
        case opening(waiting: [RealtimeClientMessage])
        case session(RealtimeSession)
        /// Waiting for the long-poll side to end (`n`); requests wait here meanwhile.
        case upgrading(LongPollTransport, waiting: [RealtimeClientMessage])
        case ended
    }

    private let start: Start
    private let service: RealtimeService
    private let longPolling: RealtimeLongPolling
    private let logger: Logger
    private let drainQueues: SocketDrainQueues
    private var mode = Mode.starting
    private var upgradedFrom: LongPollTransport?
    private var context: ChannelHandlerContext?
    private var assembler: RealtimeFrameAssembler
    /// A text message arriving in several WebSocket frames.
    private var fragments: ByteBuffer?
    private var lastHeard = NIODeadline.now()
    private var closing = false

    init(start: Start, service: RealtimeService, longPolling: RealtimeLongPolling, drainQueues: SocketDrainQueues, logger: Logger) {
        self.start = start
        self.drainQueues = drainQueues
        self.service = service
        self.longPolling = longPolling
        self.logger = logger
        self.assembler = RealtimeFrameAssembler(maxMessageBytes: service.limits.maxMessageBytes)
    }

    // MARK: - Starting and ending

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        switch start {
        case .open(let database, let host):
            do {
                if let session = try service.openSession(database: database, host: host) {
                    attach(session, context: context)
                    return
                }
                mode = .opening(waiting: [])
                let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
                let operations = service.operations
                Task {
                    let result: Result<Database, any Error>
                    do {
                        result = .success(try await operations.database(named: database, creating: false))
                    } catch {
                        result = .failure(error)
                    }
                    handler.eventLoop.execute { handler.value.finishOpening(result, host: host) }
                }
            } catch {
                refuse(error, context: context)
            }
        case .upgrade(let sessionID, let host):
            guard let transport = longPolling.transport(forSession: sessionID) else {
                // Unknown or ended: the client drops this socket and stays on long-polling.
                write(ByteBuffer(bytes: RealtimeServerMessage.reset(host: host)), context: context)
                context.flush()
                return
            }
            mode = .upgrading(transport, waiting: [])
            write(ByteBuffer(bytes: RealtimeServerMessage.switchAcknowledged), context: context)
            context.flush()
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            Task {
                let upgraded = await transport.waitForUpgrade()
                handler.eventLoop.execute { handler.value.finishUpgrade(transport, upgraded: upgraded) }
            }
        }
    }

    /// A database that cannot be opened (a bad name, the cluster unreachable): the protocol's
    /// error, then close.
    private func refuse(_ error: any Error, context: ChannelHandlerContext) {
        let text = (error as? HearthError)?.message ?? "The database is unavailable."
        // A database that does not exist: a shutdown, after which the SDKs stop reconnecting
        // (Firebase's answer for an unknown database); anything else may pass, so an error.
        let unknown = (error as? HearthError)?.code == .notFound
        write(ByteBuffer(bytes: unknown ? RealtimeServerMessage.shutdown(text) : RealtimeServerMessage.error(text)), context: context)
        close(context: context, code: .policyViolation)
    }

    /// The database loaded: the session opens and the requests that waited go first.
    private func finishOpening(_ result: Result<Database, any Error>, host: String) {
        guard case .opening(let waiting) = mode, let context else { return }
        switch result {
        case .success(let database):
            let session = service.openSession(on: database, host: host)
            attach(session, context: context)
            for message in waiting { deliver(message, to: session, context: context) }
        case .failure(let error):
            mode = .starting
            refuse(error, context: context)
        }
    }

    /// The long-poll side answered the client's `n`: this socket carries the session now, and
    /// the requests that waited go first.
    private func finishUpgrade(_ transport: LongPollTransport, upgraded: Bool) {
        guard case .upgrading(_, let waiting) = mode, let context else { return }
        guard upgraded else {
            close(context: context, code: .normalClosure)
            return
        }
        upgradedFrom = transport
        longPolling.retire(transport)
        attach(transport.session, context: context)
        for message in waiting { deliver(message, to: transport.session, context: context) }
    }

    private func attach(_ session: RealtimeSession, context: ChannelHandlerContext) {
        mode = .session(session)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        session.livenessCheck.withLock { check in
            check = .init { _, delay in
                if delay <= .zero {
                    eventLoop.execute { handler.value.checkLiveness() }
                } else {
                    eventLoop.scheduleTask(in: .nanoseconds(Int64(delay / .nanoseconds(1)))) { handler.value.checkLiveness() }
                }
            }
        }
        let drains = drainQueues.queue(for: eventLoop)
        session.outbound.setReadyHandler { drains.schedule(handler) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    /// The client closed its side of the connection (a TCP FIN without a WebSocket close
    /// frame, as a client that exits does): it can send nothing more, not even a pong, so the
    /// socket is done. The server keeps half-closed connections open (Hummingbird allows
    /// remote half-closure), so without this the session, its listens and its onDisconnect
    /// operations would wait for the next ping to fail, 20 s or more later.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
        self.context = nil
    }

    private func end() {
        let previous = mode
        mode = .ended
        switch previous {
        case .session(let session):
            let service = self.service
            Task { await service.close(session) }
        case .upgrading(let transport, _):
            // Long-polling carries on; whoever waits for this upgrade stops.
            transport.abandonUpgradeWaits()
        case .starting, .opening, .ended:
            break
        }
    }

    // MARK: - Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastHeard = .now()
        switch frame.opcode {
        case .text:
            if frame.fin { return receiveText(frame.unmaskedData, context: context) }
            fragments = frame.unmaskedData
        case .continuation:
            guard var pending = fragments else { return protocolError(.malformed("A continuation of nothing."), context: context) }
            var data = frame.unmaskedData
            guard pending.readableBytes + data.readableBytes <= service.limits.maxMessageBytes else {
                return protocolError(.messageTooLarge, context: context)
            }
            pending.writeBuffer(&data)
            if frame.fin {
                fragments = nil
                receiveText(pending, context: context)
            } else {
                fragments = pending
            }
        case .binary:
            protocolError(.malformed("Binary frames are not used."), context: context)
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            break
        case .connectionClose:
            close(context: context, code: .normalClosure)
        default:
            break
        }
    }

    private func receiveText(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        let text = String(buffer: bytes)
        let whole: String
        do throws(RealtimeFrameError) {
            guard case .message(let message) = try assembler.receive(text) else { return }
            whole = message
        } catch {
            protocolError(RealtimeProtocolError(error), context: context)
            return
        }
        do throws(RealtimeProtocolError) {
            let message = try RealtimeClientMessage.parse(whole)
            switch mode {
            case .session(let session):
                deliver(message, to: session, context: context)
            case .upgrading(let transport, var waiting):
                switch message {
                case .ping:
                    write(ByteBuffer(bytes: RealtimeServerMessage.pong), context: context)
                    context.flush()
                case .control:
                    break
                case .request, .rejected:
                    waiting.append(message)
                    mode = .upgrading(transport, waiting: waiting)
                }
            case .opening(var waiting):
                if case .ping = message {
                    write(ByteBuffer(bytes: RealtimeServerMessage.pong), context: context)
                    context.flush()
                } else if waiting.count >= service.limits.maxOutstandingWrites {
                    // Bounded while the database loads, as the session's own queues are.
                    protocolError(.malformed("Too many requests before the database was ready."), context: context)
                } else {
                    waiting.append(message)
                    mode = .opening(waiting: waiting)
                }
            case .starting, .ended:
                break
            }
        } catch {
            protocolError(error, context: context)
        }
    }

    private func deliver(_ message: RealtimeClientMessage, to session: RealtimeSession, context: ChannelHandlerContext) {
        let channel = context.channel
        let keepReading = session.deliver(message) {
            channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in channel.read() }
        }
        // The session is behind: stop reading until it catches up (TCP pushes back on the client).
        if !keepReading { channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in } }
    }

    /// The client broke the protocol: it is told why (`e`), after what is already queued, and
    /// the socket closes.
    private func protocolError(_ error: RealtimeProtocolError, context: ChannelHandlerContext) {
        let notice = ByteBuffer(bytes: RealtimeServerMessage.error(error.description))
        if case .session(let session) = mode {
            session.outbound.close(with: [notice])
        } else {
            write(notice, context: context)
            close(context: context, code: .protocolError)
        }
    }

    // MARK: - Writing

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { drain() }
        context.fireChannelWritabilityChanged()
    }

    /// Writes what the session queued while the socket can take it, with one flush.
    func drain() {
        guard let context, !closing, case .session(let session) = mode else { return }
        if session.outbound.isOverflowed {
            // Too far behind (its socket is full too): disconnected at once; the SDK reconnects
            // and listens afresh.
            _ = session.outbound.takeNow()
            closing = true
            context.close(promise: nil)
            return
        }
        var wrote = false
        defer { if wrote && !closing { context.flush() } }
        while context.channel.isWritable {
            guard let item = session.outbound.takeNow() else { return }
            switch item {
            case .events(let messages):
                for message in messages { write(message.bytes, context: context) }
                wrote = true
            case .keepAlive:
                continue
            case .resync:
                // Too far behind: told so, and disconnected (the SDK reconnects and listens afresh).
                write(ByteBuffer(bytes: RealtimeServerMessage.error("Disconnected: the client read too slowly.")), context: context)
                close(context: context, code: .goingAway)
                return
            case .closed(let final):
                for message in final { write(message, context: context) }
                close(context: context, code: .normalClosure)
                return
            }
        }
    }

    /// One message as its frames: as is, or a chunk count and chunks past 16,384 characters.
    private func write(_ message: ByteBuffer, context: ChannelHandlerContext) {
        // No message of at most 16,384 bytes can be longer than 16,384 UTF-16 units.
        if message.readableBytes <= RealtimeFrames.maxFrameLength {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: message)), promise: nil)
            return
        }
        for frame in RealtimeFrames.frames(for: String(buffer: message)) {
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: frame))), promise: nil)
        }
    }

    /// Sends a close frame and closes the connection (without waiting for the peer's reply).
    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode) {
        guard !closing else { return }
        closing = true
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))).whenComplete { _ in
            channel.close(promise: nil)
        }
        // A peer that reads nothing more would keep the close frame (and the socket) waiting.
        context.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
    }

    // MARK: - Liveness

    /// A socket silent for a while gets a ping; one silent for much longer is gone (a client
    /// that vanished without closing), and closing it runs its onDisconnect.
    private func checkLiveness() {
        guard let context, !closing else { return }
        let silence = NIODeadline.now() - lastHeard
        if silence > .seconds(Self.deadAfterSeconds) {
            close(context: context, code: .goingAway)
        } else if silence > .seconds(Self.pingAfterSeconds) {
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer())), promise: nil)
        }
    }

    static let pingAfterSeconds: Int64 = 20
    static let deadAfterSeconds: Int64 = 75
}
