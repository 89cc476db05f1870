import Foundation
import HTTPTypes
import HearthCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The realtime protocol over WebSocket at `/.ws` (reference §7.1–7.2), on hummingbird-websocket:
/// decides which requests upgrade, then runs one ``RealtimeSession`` per socket. Text frames in
/// are reassembled (``RealtimeFrameAssembler``) and parsed (``RealtimeClientMessage``); what
/// the session queues goes out in order, each message as its frames (``RealtimeFrames``), the
/// bytes of an event shared by every socket that gets it.
///
/// Threading: per socket, one task reads and hands messages to the session in order, and one
/// task writes the session's queue. Either ending ends the other: the reader closes the
/// session (whose queue then closes), the writer closes the socket.
struct RealtimeWebSocket: Sendable {
    static let path = "/.ws"

    let service: RealtimeService
    let longPolling: RealtimeLongPolling
    /// The database for a connection whose URL names none (`ns`) and whose host has no
    /// database label.
    let defaultDatabase: String

    /// The WebSocket settings: frames up to 64 KB (a 16,384-character chunk in UTF-8), and a
    /// ping every 30 seconds so a vanished client is noticed and its onDisconnect runs.
    static let configuration = WebSocketServerConfiguration(
        maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(5))

    /// Upgrades `GET /.ws?…` and nothing else (every other request goes to the HTTP responder).
    func shouldUpgrade(
        _ request: HTTPRequest
    ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard let target = request.path, target == Self.path || target.hasPrefix(Self.path + "?") else { return .dontUpgrade }
        let parameters = Self.parameters(of: target)
        let name = parameters["ns"] ?? DatabaseResponder.databaseName(host: request.authority) ?? defaultDatabase
        let host = request.authority ?? "localhost"
        let service = self.service
        if let sessionID = parameters["s"] {
            // The upgrade of a long-polling session (its handshake's `s`).
            let longPolling = self.longPolling
            return .upgrade([:]) { inbound, outbound, context in
                guard let transport = longPolling.transport(forSession: sessionID) else {
                    // Unknown or ended: the client drops this socket and stays on long-polling.
                    let reset = RealtimeServerMessage.reset(host: host)
                    try? await outbound.write(.text(String(decoding: reset, as: UTF8.self)))
                    return
                }
                await Self.upgrade(transport, inbound: inbound, outbound: outbound, longPolling: longPolling, logger: context.logger)
            }
        }
        return .upgrade([:]) { inbound, outbound, context in
            let session: RealtimeSession
            do {
                session = try service.openSession(database: name, host: host)
            } catch {
                // A database that cannot be opened (a bad name): the protocol's error, then close.
                let text = (error as? HearthError)?.message ?? "The database is unavailable."
                // Returning closes the socket.
                try? await outbound.write(.text(String(decoding: RealtimeServerMessage.error(text), as: UTF8.self)))
                return
            }
            await Self.run(session, inbound: inbound, outbound: outbound, service: service, logger: context.logger)
        }
    }

    /// The URL's query parameters (the SDKs send `v`, `ns`, `p`, `ls`, `s`, `ac`; only `ns` matters).
    static func parameters(of target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var parameters: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let key = parts.first?.removingPercentEncoding else { continue }
            let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding : ""
            if parameters[key] == nil { parameters[key] = value ?? "" }
        }
        return parameters
    }

    private static func run(
        _ session: RealtimeSession, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        service: RealtimeService, logger: Logger
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await writeQueue(of: session, to: outbound) }
            await read(inbound, into: session, maxMessageBytes: service.limits.maxMessageBytes, logger: logger)
            await service.close(session)
        }
    }

    /// Takes a long-polling session over (reference: the SDK's upgrade): the server acknowledges
    /// (`a`) and answers the client's pings itself until the client has ended transmission on
    /// long-polling (`n`) and been answered there; from then on this socket carries the session.
    /// Requests that arrive here before that wait, so the session sees them after the ones sent
    /// by long-polling.
    private static func upgrade(
        _ transport: LongPollTransport, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        longPolling: RealtimeLongPolling, logger: Logger
    ) async {
        let session = transport.session
        logger.debug("realtime upgrade socket opened", metadata: ["session": "\(session.id)"])
        let switchAck = String(decoding: RealtimeServerMessage.switchAcknowledged, as: UTF8.self)
        guard (try? await outbound.write(.text(switchAck))) != nil else { return }
        let upgraded = await withTaskGroup(of: Void.self) { group -> Bool in
            group.addTask {
                if await transport.waitForUpgrade() { await writeQueue(of: session, to: outbound) }
            }
            await read(inbound, into: session, maxMessageBytes: longPolling.service.limits.maxMessageBytes, logger: logger) { message in
                if transport.isUpgraded { return true }
                switch message {
                case .ping:
                    let pong = String(decoding: RealtimeServerMessage.pong, as: UTF8.self)
                    try? await outbound.write(.text(pong))
                    return false
                case .control:
                    return false
                case .request, .rejected:
                    return await transport.waitForUpgrade()
                }
            }
            let upgraded = transport.isUpgraded
            if upgraded {
                // The session ends with its socket (which ends the writer).
                longPolling.retire(transport)
                await longPolling.service.close(session)
            } else {
                // A socket that went before the switch: long-polling carries on.
                transport.abandonUpgradeWaits()
            }
            return upgraded
        }
        logger.debug("realtime upgrade socket ended", metadata: ["session": "\(session.id)", "upgraded": "\(upgraded)"])
    }

    /// Hands each whole message to the session (those `accept` lets through), until the socket
    /// closes or the client breaks the protocol (then it is told why with `e`).
    private static func read(
        _ inbound: WebSocketInboundStream, into session: RealtimeSession, maxMessageBytes: Int, logger: Logger,
        accept: (RealtimeClientMessage) async -> Bool = { _ in true }
    ) async {
        var assembler = RealtimeFrameAssembler(maxMessageBytes: maxMessageBytes)
        do {
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message else { throw RealtimeProtocolError.malformed("Binary frames are not used.") }
                guard case .message(let whole) = try assembler.receive(text) else { continue }
                let parsed = try RealtimeClientMessage.parse(whole)
                if await accept(parsed) { await session.receive(parsed) }
            }
        } catch let error as RealtimeProtocolError {
            // Told why, after what is already queued, then closed.
            session.outbound.close(with: [ByteBuffer(bytes: RealtimeServerMessage.error(error.description))])
        } catch {
            logger.debug("realtime socket ended", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the session's queue to the socket in order until the session ends; a reader that
    /// fell too far behind is disconnected (its client reconnects and listens afresh).
    private static func writeQueue(of session: RealtimeSession, to outbound: WebSocketOutboundWriter) async {
        do {
            while true {
                switch await session.outbound.next() {
                case .events(let messages):
                    for message in messages { try await write(message.bytes, to: outbound) }
                case .keepAlive:
                    continue
                case .resync:
                    try await write(ByteBuffer(bytes: RealtimeServerMessage.error("Disconnected: the client read too slowly.")), to: outbound)
                    try await outbound.close(.goingAway, reason: nil)
                    return
                case .closed(let final):
                    for message in final { try await write(message, to: outbound) }
                    try await outbound.close(.normalClosure, reason: nil)
                    return
                }
            }
        } catch {
            // The socket is gone; the reader ends the session.
        }
    }

    /// One message as its frames: as is, or a chunk count and chunks past 16,384 characters.
    private static func write(_ message: ByteBuffer, to outbound: WebSocketOutboundWriter) async throws {
        // No message of at most 16,384 bytes can be longer than 16,384 UTF-16 units.
        if message.readableBytes <= RealtimeFrames.maxFrameLength {
            return try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: message)))
        }
        for frame in RealtimeFrames.frames(for: String(buffer: message)) {
            try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: frame))))
        }
    }
}
