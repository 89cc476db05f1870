import Foundation
import HearthCore
import HearthProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// The clients that misbehave, to show they do not hurt the others:
///
/// - **Slow consumers** listen at the parent of every room (every write of the run reaches
///   them) with a small receive buffer, and never read their socket: half over SSE, half over
///   the realtime protocol. Each is replaced by a fresh one every `slowSeconds`.
/// - **Vanishing clients** connect, start something and disappear with a reset (`SO_LINGER` 0,
///   no FIN handshake), again and again, in turn: an SSE stream after its first event; a
///   realtime listen once acknowledged; a realtime listen plus an onDisconnect write and a
///   write left unanswered; a REST `PUT` cut off half-way through its body. Every eighth cycle
///   is a **ghost**: a realtime listen on busy data that then goes silent (reads nothing,
///   answers no ping) for `ghostSeconds` before the reset, as a client whose network vanished
///   looks to the server.
///
/// What the server does to these is not an error (they are meant to be dropped); failing to
/// connect or to be answered within the timeout is.
final class SoakHostile: Sendable {
    let soak: SoakContext
    let slowSeconds: Double
    let ghostSeconds: Double
    let stopped = Atomic<Bool>(false)

    init(soak: SoakContext, slowSeconds: Double, ghostSeconds: Double) {
        self.soak = soak
        self.slowSeconds = slowSeconds
        self.ghostSeconds = ghostSeconds
    }

    /// Sleeps `seconds`, or less once the run is stopping.
    private func pause(_ seconds: Double) async {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !stopped.load(ordering: .relaxed), ContinuousClock.now < deadline {
            try? await Task.sleep(for: min(.milliseconds(200), deadline - ContinuousClock.now))
        }
    }

    // MARK: - Slow consumers

    func runSlowConsumer(_ index: Int) async {
        while !stopped.load(ordering: .relaxed) {
            let channel: (any Channel)?
            if index % 2 == 0 {
                channel = await openSlowStream()
            } else {
                channel = await openRealtimeProbe(.listen(soak.allRoomsPath, then: .stopReading), name: "slow consumer \(index)")
            }
            if let channel {
                soak.recorder.count(.slowConsumerOpened)
                await pause(slowSeconds)
                await abortConnection(channel)
            } else {
                await pause(1)
            }
        }
    }

    /// An SSE request for every room on a connection that never reads.
    private func openSlowStream() async -> (any Channel)? {
        do {
            let channel = try await ClientBootstrap(group: soak.group)
                .channelOption(.autoRead, value: false)
                .channelOption(.socketOption(.so_rcvbuf), value: 4096)
                .connect(host: soak.host, port: soak.port).get()
            let head = soak.requestHead(method: .GET, target: soak.restTarget(soak.allRoomsPath), stream: true)
            var request = "GET \(head.uri) HTTP/1.1\r\n"
            for header in head.headers { request += "\(header.name): \(header.value)\r\n" }
            try await channel.writeAndFlush(ByteBuffer(string: request + "\r\n")).get()
            return channel
        } catch {
            soak.recorder.error("hostile-connect", "slow SSE consumer: \(error)")
            return nil
        }
    }

    // MARK: - Vanishing clients

    func runVanishing(_ index: Int, of count: Int) async {
        var cycle = index
        while !stopped.load(ordering: .relaxed) {
            let name = "vanishing client \(index)"
            let writePath = "\(soak.base)/vanish/v\(index)"
            let busy = soak.roomPath(cycle % soak.rooms)
            if cycle % 8 == 7 {
                if let channel = await openRealtimeProbe(.listen(soak.allRoomsPath, then: .stopReading), name: name) {
                    soak.recorder.count(.ghostCycle)
                    await pause(ghostSeconds)
                    await abortConnection(channel)
                }
            } else {
                let channel: (any Channel)?
                switch cycle % 4 {
                case 0: channel = await openVanishingStream(busy, name: name)
                case 1: channel = await openRealtimeProbe(.listen(busy, then: .keepReading), name: name)
                case 2: channel = await openRealtimeProbe(.listen(busy, then: .writeAndOnDisconnect(writePath)), name: name)
                default: channel = await openHalfRequest(writePath, name: name)
                }
                if let channel {
                    soak.recorder.count(.vanishCycle)
                    await abortConnection(channel)
                }
            }
            cycle += count
            await pause(Double.random(in: 0.2...1.0))
        }
    }

    /// An SSE stream, returned once its first event has arrived.
    private func openVanishingStream(_ path: String, name: String) async -> (any Channel)? {
        let signal = ProbeSignal()
        let soak = self.soak
        do {
            let channel = try await ClientBootstrap(group: soak.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(SoakFirstEventHandler(soak: soak, path: path, signal: signal))
                    }
                }
                .connect(host: soak.host, port: soak.port).get()
            return await answered(channel, signal: signal, name: "\(name) (SSE)")
        } catch {
            soak.recorder.error("hostile-connect", "\(name) (SSE): \(error)")
            return nil
        }
    }

    /// A REST `PUT` that announces 1,000 bytes of body and sends a few.
    private func openHalfRequest(_ path: String, name: String) async -> (any Channel)? {
        do {
            let channel = try await ClientBootstrap(group: soak.group).connect(host: soak.host, port: soak.port).get()
            let head = soak.requestHead(method: .PUT, target: soak.restTarget(path), bodyLength: 1000)
            var request = "PUT \(head.uri) HTTP/1.1\r\n"
            for header in head.headers { request += "\(header.name): \(header.value)\r\n" }
            try await channel.writeAndFlush(ByteBuffer(string: request + "\r\n" + #"{"partial":"#)).get()
            try await Task.sleep(for: .milliseconds(20))
            return channel
        } catch {
            soak.recorder.error("hostile-connect", "\(name) (half request): \(error)")
            return nil
        }
    }

    /// A realtime connection doing `mode`, returned once its listen is acknowledged.
    private func openRealtimeProbe(_ mode: SoakProbeHandler.Mode, name: String) async -> (any Channel)? {
        let signal = ProbeSignal()
        let soak = self.soak
        do {
            let channel = try await RealtimeLoadClient.connectWebSocket(
                group: soak.group, host: soak.host, port: soak.port, namespace: soak.namespace, receiveBuffer: 4096
            ) { SoakProbeHandler(soak: soak, mode: mode, signal: signal) }
            return await answered(channel, signal: signal, name: "\(name) (realtime)")
        } catch {
            soak.recorder.error("hostile-connect", "\(name) (realtime): \(error)")
            return nil
        }
    }

    /// `channel` once `signal` is given; nil (an error counted, the connection aborted) when
    /// it is not within the timeout or the connection fails first.
    private func answered(_ channel: any Channel, signal: ProbeSignal, name: String) async -> (any Channel)? {
        let deadline = ContinuousClock.now + .nanoseconds(Int64(soak.timeoutNanoseconds))
        while !signal.done.load(ordering: .relaxed) {
            if let failure = signal.failure {
                soak.recorder.error("hostile", "\(name): \(failure)")
                await abortConnection(channel)
                return nil
            }
            guard ContinuousClock.now < deadline else {
                soak.recorder.error("timeout", "\(name): no answer in \(soak.timeoutNanoseconds / 1_000_000_000) s")
                await abortConnection(channel)
                return nil
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return channel
    }
}

/// Set by a probe's handler when what it waited for arrived (or went wrong).
final class ProbeSignal: Sendable {
    let done = Atomic<Bool>(false)
    private let failed = Mutex<String?>(nil)

    var failure: String? { failed.withLock { $0 } }
    func fail(_ text: String) { failed.withLock { if $0 == nil { $0 = text } } }
}

/// Gives the signal at an SSE stream's first event; an answer other than 200 fails it.
private final class SoakFirstEventHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let soak: SoakContext
    let path: String
    let signal: ProbeSignal

    init(soak: SoakContext, path: String, signal: ProbeSignal) {
        self.soak = soak
        self.path = path
        self.signal = signal
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(soak.requestHead(method: .GET, target: soak.restTarget(path), stream: true))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head) where head.status != .ok: signal.fail("SSE answered \(head.status.code)")
        case .body: signal.done.store(true, ordering: .relaxed)
        default: break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !signal.done.load(ordering: .relaxed) { signal.fail("the connection closed before the first event") }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !signal.done.load(ordering: .relaxed) { signal.fail("\(error)") }
        context.close(promise: nil)
    }
}

/// A realtime connection that listens at one path and, once acknowledged, keeps reading,
/// stops reading for good (a slow consumer or a ghost), or queues an onDisconnect write and
/// sends a write it will not wait for.
final class SoakProbeHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    enum Then {
        case keepReading
        case stopReading
        case writeAndOnDisconnect(String)
    }

    enum Mode {
        case listen(String, then: Then)
    }

    private let soak: SoakContext
    private let mode: Mode
    private let signal: ProbeSignal
    private var greeted = false
    private var assembler = RealtimeMessageReader()

    init(soak: SoakContext, mode: Mode, signal: ProbeSignal) {
        self.soak = soak
        self.mode = mode
        self.signal = signal
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            send(RealtimeMessageReader.pong(to: frame), context: context)
            context.flush()
        case .text, .continuation:
            if let message = assembler.message(completedBy: frame) { handle(message, context: context) }
        default:
            break
        }
    }

    private func handle(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !signal.done.load(ordering: .relaxed) else { return }
        // Only the handshake and the listen's answer matter; data pushes are skipped unparsed.
        if !greeted {
            guard bytes.starts(with: Array(#"{"t":"c""#.utf8)) else { return }
            greeted = true
            guard case .listen(let path, _) = mode else { return }
            if let token = soak.clientToken { send(text: #"{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"\#(token)"}}}"#, context: context) }
            send(text: #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"\#(path)","h":""}}}"#, context: context)
            context.flush()
            return
        }
        guard bytes.starts(with: Array(#"{"t":"d","d":{"r":2,"#.utf8)) else { return }
        guard bytes.firstRange(of: Array(#""s":"ok""#.utf8)) != nil else {
            return signal.fail("listen refused: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        guard case .listen(_, let then) = mode else { return }
        switch then {
        case .keepReading:
            break
        case .stopReading:
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
        case .writeAndOnDisconnect(let path):
            send(text: #"{"t":"d","d":{"r":3,"a":"o","b":{"p":"\#(path)/gone","d":true}}}"#, context: context)
            send(text: #"{"t":"d","d":{"r":4,"a":"p","b":{"p":"\#(path)/here","d":\#(SoakRecorder.now())}}}"#, context: context)
            context.flush()
        }
        signal.done.store(true, ordering: .relaxed)
    }

    private func send(text: String, context: ChannelHandlerContext) {
        send(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: context.channel.allocator.buffer(string: text)), context: context)
    }

    private func send(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !signal.done.load(ordering: .relaxed) { signal.fail("the connection closed before the listen was acknowledged") }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !signal.done.load(ordering: .relaxed) { signal.fail("\(error)") }
        context.close(promise: nil)
    }
}
