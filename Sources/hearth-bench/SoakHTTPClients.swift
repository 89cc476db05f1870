import Foundation
import HearthCore
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The soak's REST and Server-Sent-Events clients: each one connection (HTTP/1.1, kept alive),
/// a channel handler on the client's event loops.
enum SoakHTTPClients {
    /// Connects one HTTP connection with `handler` after NIO's HTTP client codec.
    static func connect(_ soak: SoakContext, handler: @escaping @Sendable () -> any ChannelHandler) async throws -> any Channel {
        let channel = try await ClientBootstrap(group: soak.group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler())
                }
            }
            .connect(host: soak.host, port: soak.port).get()
        soak.register(channel)
        return channel
    }
}

/// A REST client: one request at a time on a kept-alive connection, at its share of the rate.
/// A reader `GET`s a room, a writer's value or a counter in turn; a writer replaces its own
/// value in its room (`PUT`, every third `?print=silent`, every fourth a `PATCH`), counting up
/// its sequence number. Any answer other than 2xx, a closed connection or an answer later
/// than the timeout is an error.
final class SoakRESTHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    enum Role {
        case reader(index: Int)
        case writer(WriterLedger)
    }

    private let soak: SoakContext
    private let role: Role
    private let period: TimeAmount?
    private var context: ChannelHandlerContext?
    private var timer: RepeatedTask?
    private var closing = false
    private var sent = 0

    private struct Pending {
        var sentAt: UInt64
        var seq: Int64?
        var what: String
        var timedOut = false
    }
    private var pending: Pending?
    private var status: HTTPResponseStatus = .ok
    private var body: [UInt8] = []

    /// `rate`: this client's requests per second (0: none).
    init(soak: SoakContext, role: Role, rate: Double) {
        self.soak = soak
        self.role = role
        self.period = rate > 0 ? .nanoseconds(Int64(1e9 / rate)) : nil
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelActive(context: ChannelHandlerContext) {
        if let period {
            // Spread over the period, so the clients' requests do not come in waves.
            let offset = TimeAmount.nanoseconds(Int64.random(in: 0..<max(1, period.nanoseconds)))
            timer = context.eventLoop.scheduleRepeatedTask(initialDelay: offset, delay: period) { [weak self] _ in self?.tick() }
        }
        soak.ready.add(1, ordering: .relaxed)
        context.fireChannelActive()
    }

    private func tick() {
        guard let context, !closing else { return }
        if let pending {
            if !pending.timedOut, SoakRecorder.now() - pending.sentAt > soak.timeoutNanoseconds {
                self.pending?.timedOut = true
                soak.recorder.error("timeout", "REST \(pending.what) unanswered after \(soak.timeoutNanoseconds / 1_000_000_000) s")
            }
            if soak.running.load(ordering: .relaxed) { soak.recorder.count(.lateTick) }
            return
        }
        guard soak.running.load(ordering: .relaxed) else { return }
        sent += 1
        switch role {
        case .reader(let index):
            let room = index % soak.rooms
            let path: String
            switch (index + sent) % 3 {
            case 0: path = soak.roomPath(room)
            case 1: path = soak.roomPath(room) + "/w\((index + sent) % 8)"
            default: path = soak.counterPath((index + sent) % soak.counters)
            }
            send(.GET, path: path, body: nil, seq: nil, context: context)
        case .writer(let ledger):
            let seq = ledger.sent.add(1, ordering: .relaxed).newValue
            let value = #"{"seq":\#(seq),"stamp":\#(SoakRecorder.now())}"#
            let path = soak.roomPath(ledger.room) + "/" + ledger.key
            let method: HTTPMethod = sent % 4 == 0 ? .PATCH : .PUT
            send(method, path: path, body: value, seq: seq, silent: sent % 3 == 0, context: context)
        }
    }

    private func send(_ method: HTTPMethod, path: String, body: String?, seq: Int64?, silent: Bool = false, context: ChannelHandlerContext) {
        let target = soak.restTarget(path, query: silent ? "print=silent" : nil)
        let bytes = body.map { ByteBuffer(string: $0) }
        pending = Pending(sentAt: SoakRecorder.now(), seq: seq, what: "\(method.rawValue) \(target)")
        soak.inFlight.add(1, ordering: .relaxed)
        context.write(wrapOutboundOut(.head(soak.requestHead(method: method, target: target, bodyLength: bytes?.readableBytes ?? (method == .GET ? nil : 0)))), promise: nil)
        if let bytes { context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
            body.removeAll(keepingCapacity: true)
        case .body(var buffer):
            if body.count < 512 { body += buffer.readBytes(length: min(buffer.readableBytes, 512)) ?? [] }
        case .end:
            finish()
        }
    }

    private func finish() {
        guard let pending else {
            return soak.recorder.error("protocol", "REST answer to no request (status \(status.code))")
        }
        self.pending = nil
        soak.inFlight.add(-1, ordering: .relaxed)
        let latency = SoakRecorder.now() - pending.sentAt
        guard (200..<300).contains(status.code) else {
            return soak.recorder.error("http-\(status.code)", "\(pending.what): \(String(decoding: body, as: UTF8.self))")
        }
        if let seq = pending.seq, case .writer(let ledger) = role {
            ledger.acknowledge(seq)
            soak.recorder.count(.restWrite)
            soak.recorder.record(.restWrite, latency)
        } else {
            soak.recorder.count(.restRead)
            soak.recorder.record(.restRead, latency)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SoakClosing { closing = true } else { context.fireUserInboundEventTriggered(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if let pending {
            self.pending = nil
            soak.inFlight.add(-1, ordering: .relaxed)
            if !closing { soak.recorder.error("connection-lost", "REST connection closed with \(pending.what) unanswered") }
        } else if !closing {
            soak.recorder.error("connection-lost", "REST connection closed by the server")
        }
        closing = true
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !closing { soak.recorder.error("socket", "REST: \(error)") }
        context.close(promise: nil)
    }
}

/// A Server-Sent-Events listener of one room: checks every writer's values arrive in order
/// and without a gap, and records each value's latency from its write's stamp. An answer
/// other than 200, a stream the server ends, `cancel`, `auth_revoked` or a resynchronising
/// `put` (the server found it too slow) is an error.
final class SoakSSEHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let soak: SoakContext
    private let ledger: ListenerLedger
    private let path: String
    private var closing = false
    private var started = false
    private var pending: [UInt8] = []
    private var stamps: [UInt64] = []
    private var events = 0

    init(soak: SoakContext, ledger: ListenerLedger, path: String) {
        self.soak = soak
        self.ledger = ledger
        self.path = path
    }

    func channelActive(context: ChannelHandlerContext) {
        let head = soak.requestHead(method: .GET, target: soak.restTarget(path), stream: true)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.status != .ok {
                soak.recorder.error("http-\(head.status.code)", "SSE GET \(path)")
                lose(context: context)
            }
        case .body(var buffer):
            pending += buffer.readBytes(length: buffer.readableBytes) ?? []
            let arrival = SoakRecorder.now()
            while let end = pending.firstRange(of: Self.separator) {
                let block = Array(pending[..<end.lowerBound])
                pending.removeSubrange(..<end.upperBound)
                handle(block, arrival: arrival, context: context)
            }
        case .end:
            if !closing {
                soak.recorder.error("dropped-stream", "the server ended the SSE stream of \(ledger.name)")
                lose(context: context)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !stamps.isEmpty {
            soak.recorder.record(.sseDelivery, stamps)
            stamps.removeAll(keepingCapacity: true)
        }
        if events > 0 {
            soak.recorder.count(.sseEvent, events)
            events = 0
        }
        context.fireChannelReadComplete()
    }

    private static let separator = Array("\n\n".utf8)

    private func handle(_ block: [UInt8], arrival: UInt64, context: ChannelHandlerContext) {
        var event = ""
        var data: ArraySlice<UInt8> = []
        for line in block.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: Array("event: ".utf8)) {
                event = String(decoding: line.dropFirst(7), as: UTF8.self)
            } else if line.starts(with: Array("data: ".utf8)) {
                data = line.dropFirst(6)
            }
        }
        switch event {
        case "keep-alive":
            return
        case "put", "patch":
            guard let message = try? JSONParser.parseDocument(data) else {
                return soak.recorder.error("protocol", "unreadable SSE event: \(String(decoding: block.prefix(200), as: UTF8.self))")
            }
            events += 1
            let keys = Self.keys(of: message.child(ChildKey("path")))
            let value = message.child(ChildKey("data"))
            if keys.isEmpty {
                // The whole room: the first event, or a resync after the stream fell behind.
                ledger.reset(to: SoakValues.sequences(inRoom: value))
                if started {
                    soak.recorder.error("resync", "\(ledger.name) was resynchronised (the server found it too slow)")
                } else {
                    started = true
                    ledger.ready.store(true, ordering: .relaxed)
                    soak.ready.add(1, ordering: .relaxed)
                }
            } else if keys.count == 1, let seq = value.child(ChildKey("seq")).integerValue {
                ledger.saw(writer: keys[0], seq: seq)
                if let stamp = value.child(ChildKey("stamp")).integerValue, stamp > 0, UInt64(stamp) <= arrival {
                    stamps.append(arrival - UInt64(stamp))
                }
            } else {
                soak.recorder.error("protocol", "unexpected SSE \(event) at \(keys): \(String(decoding: data.prefix(200), as: UTF8.self))")
            }
        default:
            soak.recorder.error("stream-\(event)", "\(ledger.name): \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }

    static func keys(of path: Node) -> [String] {
        guard case .string(let text) = path else { return [] }
        return text.split(separator: "/").map(String.init)
    }

    private func lose(context: ChannelHandlerContext) {
        closing = true
        ledger.lost.store(true, ordering: .relaxed)
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SoakClosing { closing = true } else { context.fireUserInboundEventTriggered(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !closing {
            closing = true
            ledger.lost.store(true, ordering: .relaxed)
            soak.recorder.error("dropped-stream", "the SSE connection of \(ledger.name) closed")
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !closing { soak.recorder.error("socket", "SSE \(ledger.name): \(error)") }
        context.close(promise: nil)
    }
}

/// Reading the soak's values.
enum SoakValues {
    /// Each writer's sequence number in a room's whole value (`{"<writer>":{"seq":n,…},…}`).
    static func sequences(inRoom value: Node) -> [String: Int64] {
        var result: [String: Int64] = [:]
        guard let children = value.children else { return result }
        for (key, child) in children {
            if let seq = child.child(ChildKey("seq")).integerValue { result[key.string] = seq }
        }
        return result
    }
}
