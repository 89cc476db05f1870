import Foundation
import HearthCore
import HearthProtocol
import NIOCore
import NIOWebSocket
import Synchronization

/// A realtime-protocol client of the soak's mix, as the SDKs behave: it listens to its room
/// and to one shared counter, replaces its own value in its room (`p`, every fourth an `m`)
/// at its share of the write rate, and increments the counter in transactions at its share
/// of the transaction rate: a `p` carrying the hash of the value it last received (`h`),
/// retried on `datastale` with the value the server has sent by then, up to 25 attempts as
/// the SDKs do. It answers the server's WebSocket pings.
///
/// Errors: any answer other than `ok` (and `datastale` to a transaction), an `e`, `s` or `r`
/// control message, a revoked listen or credential, a connection the server closes, a
/// request unanswered after the timeout, and a room value missed or out of order.
final class SoakRealtimeHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private enum Request {
        case auth
        case listenRoom
        case listenCounter
        case write(seq: Int64)
        case transaction(hash: String)
    }

    private struct Pending {
        var request: Request
        var sentAt: UInt64
        var timedOut = false
    }

    private struct Transaction {
        var startedAt: UInt64
        var attempts = 0
        var inFlight = false
        /// `datastale` came before the counter's new value: retried when it arrives.
        var waitingSince: UInt64?
    }

    static let maxAttempts = 25

    private let soak: SoakContext
    private let ledger: ListenerLedger
    private let writer: WriterLedger
    private let counter: Int
    private let writePeriod: TimeAmount?
    private let transactionPeriod: TimeAmount?
    private let roomKeys: [String]
    private let counterKeys: [String]

    private var context: ChannelHandlerContext?
    private var timers: [RepeatedTask] = []
    private var closing = false
    private var greeted = false
    private var listensAcknowledged = 0
    private var assembler = RealtimeMessageReader()
    private var nextID: Int64 = 1
    private var pending: [Int64: Pending] = [:]
    private var writeInFlight = false
    private var writes = 0
    /// The counter's value as last pushed (nil until the listen's first value).
    private var counterValue: Node?
    private var transaction: Transaction?
    private var wrote = false

    private var stamps: [UInt64] = []
    private var events = 0

    init(soak: SoakContext, ledger: ListenerLedger, writer: WriterLedger, counter: Int, writeRate: Double, transactionRate: Double) {
        self.soak = soak
        self.ledger = ledger
        self.writer = writer
        self.counter = counter
        self.writePeriod = writeRate > 0 ? .nanoseconds(Int64(1e9 / writeRate)) : nil
        self.transactionPeriod = transactionRate > 0 ? .nanoseconds(Int64(1e9 / transactionRate)) : nil
        self.roomKeys = soak.roomPath(ledger.room).split(separator: "/").map(String.init)
        self.counterKeys = soak.counterPath(counter).split(separator: "/").map(String.init)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    // MARK: - Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            send(RealtimeMessageReader.pong(to: frame), context: context)
        case .connectionClose:
            if !closing {
                soak.recorder.error("dropped-connection", "the server closed the realtime connection of \(ledger.name)")
                lose()
            }
            context.close(promise: nil)
        case .text, .continuation:
            if let message = assembler.message(completedBy: frame) { handle(message, context: context) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !stamps.isEmpty {
            soak.recorder.record(.realtimeDelivery, stamps)
            stamps.removeAll(keepingCapacity: true)
        }
        if events > 0 {
            soak.recorder.count(.realtimeEvent, events)
            events = 0
        }
        flushIfWritten(context: context)
        context.fireChannelReadComplete()
    }

    private func flushIfWritten(context: ChannelHandlerContext) {
        if wrote {
            wrote = false
            context.flush()
        }
    }

    private func handle(_ bytes: [UInt8], context: ChannelHandlerContext) {
        let arrival = SoakRecorder.now()
        guard let message = try? JSONParser.parseDocument(bytes) else {
            return soak.recorder.error("protocol", "unreadable realtime message: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        let body = message.child(ChildKey("d"))
        switch Self.string(message.child(ChildKey("t"))) {
        case "c":
            switch Self.string(body.child(ChildKey("t"))) {
            case "h" where !greeted:
                greeted = true
                start(context: context)
            case "o":
                break
            default:
                soak.recorder.error("protocol", "\(ledger.name) got control message \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            }
        case "d":
            if let id = body.child(ChildKey("r")).integerValue {
                answer(id: id, body: body.child(ChildKey("b")), arrival: arrival, context: context)
            } else {
                push(action: Self.string(body.child(ChildKey("a"))), body: body.child(ChildKey("b")), arrival: arrival, bytes: bytes,
                     context: context)
            }
        default:
            soak.recorder.error("protocol", "\(ledger.name) got \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
    }

    private static func string(_ node: Node) -> String {
        if case .string(let text) = node { return text }
        return ""
    }

    // MARK: - Requests

    private func start(context: ChannelHandlerContext) {
        if let token = soak.clientToken {
            request(.auth, #""a":"gauth","b":{"cred":"\#(token)"}"#, context: context)
        }
        request(.listenRoom, #""a":"q","b":{"p":"\#(soak.roomPath(ledger.room))","h":""}"#, context: context)
        request(.listenCounter, #""a":"q","b":{"p":"\#(soak.counterPath(counter))","h":""}"#, context: context)
        flushIfWritten(context: context)
        if let writePeriod {
            timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: Self.offset(in: writePeriod), delay: writePeriod) {
                [self] _ in tickWrite()
            })
        }
        if let transactionPeriod {
            timers.append(context.eventLoop.scheduleRepeatedTask(
                initialDelay: Self.offset(in: transactionPeriod), delay: transactionPeriod
            ) { [self] _ in tickTransaction() })
        }
    }

    /// A random start within the first period, so the clients' requests do not come in waves.
    static func offset(in period: TimeAmount) -> TimeAmount {
        .nanoseconds(Int64.random(in: 0..<max(1, period.nanoseconds)))
    }

    private func request(_ kind: Request, _ fields: String, context: ChannelHandlerContext) {
        let id = nextID
        nextID += 1
        pending[id] = Pending(request: kind, sentAt: SoakRecorder.now())
        send(text: #"{"t":"d","d":{"r":\#(id),\#(fields)}}"#, context: context)
    }

    private var active: Bool { !closing && listensAcknowledged == 2 && soak.running.load(ordering: .relaxed) }

    private func tickWrite() {
        guard let context else { return }
        checkTimeouts()
        guard active else { return }
        guard !writeInFlight else { return soak.recorder.count(.lateTick) }
        writes += 1
        let seq = writer.sent.add(1, ordering: .relaxed).newValue
        let action = writes % 4 == 0 ? "m" : "p"
        let path = soak.roomPath(ledger.room) + "/" + writer.key
        writeInFlight = true
        soak.inFlight.add(1, ordering: .relaxed)
        request(.write(seq: seq), #""a":"\#(action)","b":{"p":"\#(path)","d":{"seq":\#(seq),"stamp":\#(SoakRecorder.now())}}"#, context: context)
        flushIfWritten(context: context)
    }

    private func tickTransaction() {
        guard let context else { return }
        checkTimeouts()
        if let waiting = transaction?.waitingSince, SoakRecorder.now() - waiting > 1_000_000_000 {
            // The new value never came: try again with what we have.
            attemptTransaction(context: context)
            return flushIfWritten(context: context)
        }
        guard active, counterValue != nil else { return }
        guard transaction == nil else { return soak.recorder.count(.lateTick) }
        transaction = Transaction(startedAt: SoakRecorder.now())
        soak.inFlight.add(1, ordering: .relaxed)
        attemptTransaction(context: context)
        flushIfWritten(context: context)
    }

    /// Sends the transaction's next attempt: the counter plus one, on the hash of the value seen.
    private func attemptTransaction(context: ChannelHandlerContext) {
        guard var transaction, let value = counterValue else { return }
        let hash = value.isNull ? "" : value.hash
        let next = (value.integerValue ?? 0) + 1
        transaction.attempts += 1
        transaction.inFlight = true
        transaction.waitingSince = nil
        self.transaction = transaction
        request(.transaction(hash: hash), #""a":"p","b":{"p":"\#(soak.counterPath(counter))","d":\#(next),"h":"\#(hash)"}"#, context: context)
    }

    private func checkTimeouts() {
        let now = SoakRecorder.now()
        for (id, entry) in pending where !entry.timedOut && now - entry.sentAt > soak.timeoutNanoseconds {
            pending[id]?.timedOut = true
            soak.recorder.error("timeout", "\(ledger.name): request \(id) (\(entry.request)) unanswered after \(soak.timeoutNanoseconds / 1_000_000_000) s")
        }
    }

    // MARK: - Answers and pushes

    private func answer(id: Int64, body: Node, arrival: UInt64, context: ChannelHandlerContext) {
        guard let entry = pending.removeValue(forKey: id) else {
            return soak.recorder.error("protocol", "\(ledger.name): an answer to no request (\(id))")
        }
        let status = Self.string(body.child(ChildKey("s")))
        let latency = arrival - entry.sentAt
        switch entry.request {
        case .auth:
            if status != "ok" { soak.recorder.error("realtime-\(status)", "\(ledger.name): gauth refused") }
        case .listenRoom, .listenCounter:
            guard status == "ok" else {
                return soak.recorder.error("realtime-\(status)", "\(ledger.name): listen refused: \(body.child(ChildKey("d")))")
            }
            listensAcknowledged += 1
            if listensAcknowledged == 2 {
                ledger.ready.store(true, ordering: .relaxed)
                soak.ready.add(1, ordering: .relaxed)
            }
        case .write(let seq):
            writeInFlight = false
            soak.inFlight.add(-1, ordering: .relaxed)
            guard status == "ok" else {
                return soak.recorder.error("realtime-\(status)", "\(ledger.name): write \(seq): \(body.child(ChildKey("d")))")
            }
            writer.acknowledge(seq)
            soak.recorder.count(.realtimeWrite)
            soak.recorder.record(.realtimeWrite, latency)
        case .transaction(let hash):
            guard var transaction else { return }
            transaction.inFlight = false
            if status == "ok" {
                soak.increments[counter].value.add(1, ordering: .relaxed)
                soak.recorder.count(.transaction)
                soak.recorder.record(.transaction, arrival - transaction.startedAt)
                soak.inFlight.add(-1, ordering: .relaxed)
                self.transaction = nil
            } else if status == "datastale" {
                soak.recorder.count(.transactionRetry)
                guard transaction.attempts < Self.maxAttempts else {
                    // Nothing was added, so the counters stay exact; whether every datastale
                    // came after a newer value is checked on each attempt above.
                    soak.recorder.count(.transactionGaveUp)
                    soak.inFlight.add(-1, ordering: .relaxed)
                    self.transaction = nil
                    return
                }
                self.transaction = transaction
                // The server sends the new value before `datastale`; if it has not come, wait.
                let seen = counterValue.map { $0.isNull ? "" : $0.hash }
                if seen != hash {
                    attemptTransaction(context: context)
                } else {
                    self.transaction?.waitingSince = arrival
                }
            } else {
                soak.recorder.error("realtime-\(status)", "\(ledger.name): transaction: \(body.child(ChildKey("d")))")
                soak.inFlight.add(-1, ordering: .relaxed)
                self.transaction = nil
            }
        }
    }

    private func push(action: String, body: Node, arrival: UInt64, bytes: [UInt8], context: ChannelHandlerContext) {
        guard action == "d" || action == "m" else {
            // `c` (a listen revoked), `ac` (the credential revoked), or anything else.
            return soak.recorder.error("realtime-push-\(action)", "\(ledger.name): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
        events += 1
        let keys = SoakSSEHandler.keys(of: body.child(ChildKey("p")))
        let data = body.child(ChildKey("d"))
        if keys == counterKeys, action == "d" {
            counterValue = data
            if let transaction, !transaction.inFlight, transaction.waitingSince != nil {
                attemptTransaction(context: context)
            }
        } else if keys.count > roomKeys.count, keys.starts(with: roomKeys) {
            let relative = keys.dropFirst(roomKeys.count)
            guard relative.count == 1, let seq = data.child(ChildKey("seq")).integerValue else {
                return soak.recorder.error("protocol", "\(ledger.name): unexpected push \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            }
            ledger.saw(writer: relative.first!, seq: seq)
            if let stamp = data.child(ChildKey("stamp")).integerValue, stamp > 0, UInt64(stamp) <= arrival {
                stamps.append(arrival - UInt64(stamp))
            }
        } else if keys == roomKeys, action == "d" {
            ledger.reset(to: SoakValues.sequences(inRoom: data))
            if ledger.ready.load(ordering: .relaxed) {
                soak.recorder.error("resync", "\(ledger.name) was sent its whole room again")
            }
        } else {
            soak.recorder.error("protocol", "\(ledger.name): a push outside its listens: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
    }

    // MARK: - Connection

    private func send(text: String, context: ChannelHandlerContext) {
        send(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: context.channel.allocator.buffer(string: text)), context: context)
    }

    private func send(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        wrote = true
    }

    /// The connection is gone: its unanswered requests no longer count as in flight.
    private func lose() {
        closing = true
        ledger.lost.store(true, ordering: .relaxed)
        for timer in timers { timer.cancel() }
        let unanswered = (writeInFlight ? 1 : 0) + (transaction != nil ? 1 : 0)
        if unanswered > 0 { soak.inFlight.add(-unanswered, ordering: .relaxed) }
        writeInFlight = false
        transaction = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SoakClosing { closing = true } else { context.fireUserInboundEventTriggered(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !closing {
            soak.recorder.error("dropped-connection", "the realtime connection of \(ledger.name) closed")
        }
        lose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !closing { soak.recorder.error("socket", "realtime \(ledger.name): \(error)") }
        context.close(promise: nil)
    }
}
