import HearthProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// Many raw realtime-protocol (WebSocket) connections from one process, for the `ws-*`
/// benchmarks. Every connection is a channel handler on the client's event loops (no task per
/// connection, so the client stays cheap next to the server on a small machine): it upgrades
/// `GET /.ws?v=5&ns=<db>`, waits for the server's handshake, then plays its ``Role``.
///
/// Messages are recognised by their leading bytes, as the server writes them (docs/protocol.md §5, §6, §9),
/// not parsed as JSON: the client must not be the bottleneck it measures.
final class RealtimeLoadClient: Sendable {
    /// What a connection does once the server's handshake has arrived.
    enum Role: Sendable {
        /// Listen at `path` (`q`), then record every pushed value that carries `"stamp":<ns>`.
        case listen(path: String)
        /// Send `p` requests under `prefix/<n>` with up to `depth` unanswered, while
        /// ``running`` holds, and time each one's answer; first `gauth` with `credential`, if
        /// any (requests are handled in order, so the writes are judged with it).
        case write(prefix: String, depth: Int, credential: String?)
        /// Say nothing after the handshake (the cost of a bare realtime connection).
        case greet
    }

    let group: MultiThreadedEventLoopGroup
    let host: String
    let port: Int
    /// The database (`ns`); nil leaves it out, so the server uses its default database.
    let namespace: String?

    /// Handshakes received: connections that upgraded and were greeted.
    let greeted = Atomic<Int>(0)
    /// `ok` answers to listens.
    let listensAcknowledged = Atomic<Int>(0)
    /// Pushed values that carried a stamp, and their latencies (ns from stamp to arrival).
    let deliveries = Atomic<Int>(0)
    let latencies = Mutex<[UInt64]>([])
    /// `ok` answers to writes while ``measuring``, and their latencies (ns from send to answer).
    let writesAcknowledged = Atomic<Int>(0)
    let writeLatencies = Mutex<[UInt64]>([])
    /// Whether writers keep sending, and whether their answers count.
    let running = Atomic<Bool>(true)
    let measuring = Atomic<Bool>(false)
    /// Answers that were not `ok`, `e`/`s` messages, and connections the server closed: the
    /// first few verbatim, so a run that went wrong says how.
    let failures = Atomic<Int>(0)
    let closedByServer = Atomic<Int>(0)
    let failureSamples = Mutex<[String]>([])
    let connections = Mutex<[any Channel]>([])

    init(host: String, port: Int, namespace: String?, threads: Int = 2) {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.host = host
        self.port = port
        self.namespace = namespace
    }

    /// Opens `count` connections, `batch` at a time (a burst of thousands of SYNs overflows the
    /// server's accept backlog); connection `index` plays `role(index)`.
    func open(count: Int, batch: Int = 200, role: @escaping @Sendable (Int) -> Role) async throws {
        var opened = 0
        while opened < count {
            let size = min(batch, count - opened)
            let first = opened
            try await withThrowingTaskGroup(of: (any Channel).self) { tasks in
                for index in first..<(first + size) {
                    tasks.addTask { try await self.connect(role: role(index)) }
                }
                for try await channel in tasks {
                    connections.withLock { $0.append(channel) }
                }
            }
            opened += size
        }
    }

    private func connect(role: Role) async throws -> any Channel {
        let client = self
        return try await Self.connectWebSocket(group: group, host: host, port: port, namespace: namespace) {
            RealtimeConnectionHandler(client: client, role: role)
        }
    }

    /// Upgrades a new connection to `GET /.ws?v=5&ns=<namespace>` and puts `handler()` after
    /// the WebSocket frame codec (`receiveBuffer`: a smaller socket receive buffer, in bytes).
    static func connectWebSocket(
        group: any EventLoopGroup, host: String, port: Int, namespace: String?, receiveBuffer: Int? = nil,
        handler: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> any Channel {
        var target = "/.ws?v=5"
        if let namespace { target += "&ns=\(namespace)" }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        var bootstrap = ClientBootstrap(group: group).channelOption(.socketOption(.so_reuseaddr), value: 1)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: receiveBuffer) }
        let upgraded = try await bootstrap
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<(any Channel)?>(
                        maxFrameSize: 1 << 16,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(handler())
                                return channel
                            }
                        }
                    )
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<(any Channel)?>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(nil) }
                    )
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // The server's handshake often arrives in the same read as its 101 response;
                    // NIO's default would drop it with the HTTP decoder.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        guard let channel = try await upgraded.get() else {
            throw RealtimeLoadError("the server did not upgrade \(target) to a WebSocket")
        }
        return channel
    }

    /// Notes an answer or message that went wrong (kept verbatim for the first five).
    func fail(_ text: String) {
        failures.add(1, ordering: .relaxed)
        failureSamples.withLock { if $0.count < 5 { $0.append(text) } }
    }

    /// Closes every connection.
    func closeAll() async {
        running.store(false, ordering: .relaxed)
        for channel in connections.withLock({ $0 }) { channel.setClosing() }
        for channel in connections.withLock({ $0 }) { try? await channel.close().get() }
        connections.withLock { $0.removeAll() }
    }

    func shutdown() async {
        await closeAll()
        try? await group.shutdownGracefully()
    }

    /// Which count to wait for (atomics cannot be named by key paths).
    enum Counter { case greeted, listensAcknowledged }

    func count(_ counter: Counter) -> Int {
        switch counter {
        case .greeted: greeted.load(ordering: .relaxed)
        case .listensAcknowledged: listensAcknowledged.load(ordering: .relaxed)
        }
    }

    /// Waits until `counter` reaches `count`, or the deadline.
    func wait(for counter: Counter, toReach count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if self.count(counter) >= count { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return false
    }

    /// A one-line account of what went wrong, or nil when nothing did.
    var problems: String? {
        let failed = failures.load(ordering: .relaxed)
        let closed = closedByServer.load(ordering: .relaxed)
        guard failed + closed > 0 else { return nil }
        let samples = failureSamples.withLock { $0 }.joined(separator: " | ")
        return "\(failed) failed answers or server errors, \(closed) connections closed by the server. \(samples)"
    }
}

/// Tells a connection's handler that the client itself is closing it (not the server).
private struct ClosingEvent {}

extension Channel {
    fileprivate func setClosing() {
        pipeline.fireUserInboundEventTriggered(ClosingEvent())
    }
}

struct RealtimeLoadError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One connection: greets, plays its role, answers the server's WebSocket pings (the server
/// closes a socket that misses one, which would end an idle benchmark at 60 s).
private final class RealtimeConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let client: RealtimeLoadClient
    private let role: RealtimeLoadClient.Role
    private var greeted = false
    private var closing = false
    private var assembler = RealtimeMessageReader()
    /// Writer state: the next request ID, and each unanswered request's send time.
    private var nextID: Int64 = 1
    private var sent: [Int64: UInt64] = [:]
    /// Latencies gathered during one read burst, handed to the client once per burst.
    private var stamps: [UInt64] = []
    private var answered: [UInt64] = []
    private var wrote = false

    private static let control = Array(#"{"t":"c""#.utf8)
    private static let response = Array(#"{"t":"d","d":{"r":"#.utf8)
    private static let push = Array(#"{"t":"d","d":{"a":"#.utf8)
    private static let okStatus = Array(#","b":{"s":"ok""#.utf8)
    private static let stampMarker = Array(#""stamp":"#.utf8)

    init(client: RealtimeLoadClient, role: RealtimeLoadClient.Role) {
        self.client = client
        self.role = role
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            send(RealtimeMessageReader.pong(to: frame), context: context)
        case .connectionClose:
            context.close(promise: nil)
        case .text, .continuation:
            if let message = assembler.message(completedBy: frame) { handle(message, context: context) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !stamps.isEmpty {
            let batch = stamps
            stamps.removeAll(keepingCapacity: true)
            client.latencies.withLock { $0 += batch }
            client.deliveries.add(batch.count, ordering: .relaxed)
        }
        if !answered.isEmpty {
            let batch = answered
            answered.removeAll(keepingCapacity: true)
            if client.measuring.load(ordering: .relaxed) {
                client.writeLatencies.withLock { $0 += batch }
                client.writesAcknowledged.add(batch.count, ordering: .relaxed)
            }
        }
        // Requests sent while reading go out in one flush.
        if wrote {
            wrote = false
            context.flush()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ClosingEvent { closing = true } else { context.fireUserInboundEventTriggered(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !closing { client.closedByServer.add(1, ordering: .relaxed) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !closing { client.fail("socket error: \(error)") }
        context.close(promise: nil)
    }

    // MARK: - Messages

    private func handle(_ message: [UInt8], context: ChannelHandlerContext) {
        let arrival = SSELoadClient.now()
        if message.starts(with: Self.control) {
            if !greeted {
                // The first message is the handshake (`h`); only then may the client speak.
                greeted = true
                client.greeted.add(1, ordering: .relaxed)
                start(context: context)
            } else if message.firstRange(of: Array(#""t":"e""#.utf8)) != nil || message.firstRange(of: Array(#""t":"s""#.utf8)) != nil {
                client.fail(String(decoding: message.prefix(300), as: UTF8.self))
            }
        } else if message.starts(with: Self.response) {
            var cursor = Self.response.count
            let id = Self.number(in: message, at: &cursor)
            guard message[cursor...].starts(with: Self.okStatus) else {
                return client.fail(String(decoding: message.prefix(300), as: UTF8.self))
            }
            if let sentAt = sent.removeValue(forKey: Int64(id)) {
                answered.append(arrival - sentAt)
                if client.running.load(ordering: .relaxed) { sendWrite(context: context) }
            } else {
                client.listensAcknowledged.add(1, ordering: .relaxed)
            }
        } else if message.starts(with: Self.push) {
            guard let marker = message.firstRange(of: Self.stampMarker) else { return }
            var cursor = marker.upperBound
            let stamp = Self.number(in: message, at: &cursor)
            if stamp > 0 && stamp <= arrival { stamps.append(arrival - stamp) }
        }
    }

    private func start(context: ChannelHandlerContext) {
        switch role {
        case .listen(let path):
            let request = #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"\#(path)","h":""}}}"#
            send(text: request, context: context)
        case .write(_, let depth, let credential):
            if let credential {
                send(text: #"{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"\#(credential)"}}}"#, context: context)
            }
            nextID = 2
            for _ in 0..<depth { sendWrite(context: context) }
        case .greet:
            break
        }
        context.flush()
    }

    private func sendWrite(context: ChannelHandlerContext) {
        guard case .write(let prefix, _, _) = role else { return }
        let id = nextID
        nextID += 1
        // A small object like the HTTP benchmark's post, so the two rows compare like for like.
        let request = #"{"t":"d","d":{"r":\#(id),"a":"p","b":{"p":"\#(prefix)/\#(id)","d":{"title":"Hello","body":"A post body of moderate length for benchmarking.","author":"user1","stars":0}}}}"#
        sent[id] = SSELoadClient.now()
        send(text: request, context: context)
    }

    private func send(text: String, context: ChannelHandlerContext) {
        let buffer = context.channel.allocator.buffer(string: text)
        send(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer), context: context)
    }

    private func send(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        wrote = true
    }

    /// Reads the decimal digits at `cursor`, leaving it after them.
    private static func number(in bytes: [UInt8], at cursor: inout Int) -> UInt64 {
        var value: UInt64 = 0
        while cursor < bytes.endIndex, bytes[cursor] >= 48, bytes[cursor] <= 57 {
            value = value &* 10 &+ UInt64(bytes[cursor] - 48)
            cursor += 1
        }
        return value
    }
}
