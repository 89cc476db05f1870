import Foundation
import HearthCore
import HearthEngine
import HearthProtocol
import NIOCore
import Synchronization

/// One long-polling connection of a browser SDK (the JSONP fallback, docs/protocol.md §2.3): the
/// client's data arrives as base64 segments in the URLs of script requests, and the server's
/// messages leave as numbered packets in the answers to its polls, until the client upgrades
/// to a WebSocket or stops polling.
///
/// Threading: `state` guards everything mutable. Polls are answered by whichever request task
/// holds the current poll; at most one poll waits at a time (a newer one releases it). Whole
/// messages go to the session's inbox in segment order, under `state`.
final class LongPollTransport: Sendable {
    /// A long-poll's identity in its URLs (`id`, `pw`), and the page's callback number (`cb`).
    let id: String
    let password: String
    let callback: String
    let session: RealtimeSession
    /// The client's address, for the cap on sessions per address.
    let address: String
    /// Bytes of segments that may wait for an earlier one: a whole message's worth, in base64.
    let maxHeldBytes: Int
    /// Called when a poll has taken its packet from the session's queue, before it answers
    /// (tests hold a poll there).
    let packetTaken: (@Sendable () -> Void)?

    private struct State {
        /// The next packet number (0 is the connect answer's handshake).
        var nextPacket = 1
        var expectedSegment = 0
        var segments: [Int: (total: Int, data: Substring)] = [:]
        /// The bytes of `segments`.
        var heldBytes = 0
        /// The poll that may wait for messages; older ones are answered at once.
        var currentPoll = 0
        /// When the client last asked for anything (milliseconds), to notice it is gone.
        var lastSeen: Int64
        /// The client ended transmission here (`n`): the session moves to its WebSocket.
        var upgradeRequested = false
        var upgraded = false
        var upgradeWaiters: [CheckedContinuation<Bool, Never>] = []
        var closed = false
    }

    private let state: Mutex<State>

    init(
        id: String, password: String, callback: String, session: RealtimeSession, now: Int64, address: String = "",
        maxHeldBytes: Int = RealtimeLimits().maxMessageBytes * 4 / 3 + 4096, packetTaken: (@Sendable () -> Void)? = nil
    ) {
        self.id = id
        self.password = password
        self.callback = callback
        self.session = session
        self.address = address
        self.maxHeldBytes = maxHeldBytes
        self.packetTaken = packetTaken
        self.state = Mutex(State(lastSeen: now))
        // The client's `n`: it sends over its WebSocket from now on. What is queued goes out
        // here, then `n` last; the socket takes the session's queue after that.
        session.endOfTransmission.withLock { hook in
            hook = .init { [weak self] in
                guard let self else { return }
                state.withLock { $0.upgradeRequested = true }
                // Not `wake()`: a poll between finding nothing to say and waiting would miss
                // that, and hold `n` (and the requests waiting on the WebSocket) until its
                // timeout. A keep-alive is work its wait sees; a poll sends nothing for it.
                session.outbound.pokeKeepAlive()
            }
        }
    }

    // MARK: - Answers

    /// The connect answer: the two callbacks the page registered (the script runs in a hidden
    /// iframe, the callbacks live on its parent), `start` with the poll credentials, and the
    /// handshake as packet 0.
    func connectScript(handshake: [UInt8]) -> String {
        """
        function pLPCommand(c, a1, a2, a3, a4) {
        parent.window["pLPCommand\(callback)"] && parent.window["pLPCommand\(callback)"](c, a1, a2, a3, a4);
        }
        function pRTLPCB(pN, data) {
        parent.window["pRTLPCB\(callback)"] && parent.window["pRTLPCB\(callback)"](pN, data);
        }
        pLPCommand('start','\(id)','\(password)');
        pRTLPCB(0,[\(String(decoding: handshake, as: UTF8.self))]);
        """
    }

    /// Takes a poll's data segments (`seg<i>`, `ts<i>`, `d<i>`) and hands the client's messages
    /// that are now whole to the session, in order.
    /// - Throws: ``RealtimeProtocolError`` for segments that do not decode to messages.
    func receiveSegments(_ parameters: [String: String], now: Int64) throws(RealtimeProtocolError) {
        var incoming: [(Int, Int, Substring)] = []
        var index = 0
        while let segment = parameters["seg\(index)"].flatMap(Int.init), let total = parameters["ts\(index)"].flatMap(Int.init),
            let data = parameters["d\(index)"]
        {
            incoming.append((segment, total, Substring(data)))
            index += 1
        }
        try state.withLock { state throws(RealtimeProtocolError) in
            state.lastSeen = now
            for (segment, total, data) in incoming where segment >= state.expectedSegment {
                guard total > 0, total <= 100_000, segment - state.expectedSegment < 100_000 else {
                    throw .malformed("Invalid segment.")
                }
                // What waits for a missing earlier segment is bounded: a client that withholds
                // one cannot make the server keep everything it sends after it.
                state.heldBytes += data.utf8.count - (state.segments[segment]?.data.utf8.count ?? 0)
                state.segments[segment] = (total, data)
                guard state.heldBytes <= maxHeldBytes else { throw .malformed("Too much data waits for a missing segment.") }
            }
            // Whole messages, in segment order.
            while let first = state.segments[state.expectedSegment] {
                let range = state.expectedSegment..<(state.expectedSegment + first.total)
                guard range.allSatisfy({ state.segments[$0] != nil }) else { break }
                let encoded = range.map { state.segments[$0]!.data }.joined()
                for number in range {
                    state.heldBytes -= state.segments[number]?.data.utf8.count ?? 0
                    state.segments[number] = nil
                }
                state.expectedSegment = range.upperBound
                guard let message = Self.decode(encoded) else { throw .malformed("A segment is not web-safe base64 of UTF-8.") }
                // Under the lock, so two polls carrying segments cannot swap messages. A poll's
                // URL is short, so the inbox needs no back-pressure here.
                _ = session.deliver(try RealtimeClientMessage.parse(message)) {}
            }
        }
    }

    /// Web-safe base64 with `.` padding, as the SDK encodes.
    static func decode(_ text: String) -> String? {
        var standard = String(text.map { character -> Character in
            switch character {
            case "-": return "+"
            case "_": return "/"
            case ".": return "="
            default: return character
            }
        })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// Answers poll number `poll` (the script text): the messages queued for the client as one
    /// packet, waiting up to `timeout` for some; a poll replaced by a newer one gets an empty
    /// script (the client polls again).
    func answerPoll(timeout: Duration) async -> String {
        let poll = state.withLock { state -> Int in
            state.currentPoll += 1
            return state.currentPoll
        }
        // A poll that waited is released: the newest one waits now.
        session.outbound.wake()
        let deadline = ContinuousClock.now + timeout
        let timer = Task {
            try? await Task.sleep(until: deadline)
            session.outbound.wake()
        }
        defer { timer.cancel() }
        while true {
            if let script = packet(for: poll) { return script }
            if state.withLock({ $0.closed && !$0.upgraded }) { return "pLPCommand('close');" }
            if ContinuousClock.now >= deadline || !isCurrent(poll) { return "" }
            await session.outbound.waitForWork()
        }
    }

    private func isCurrent(_ poll: Int) -> Bool {
        state.withLock { $0.currentPoll == poll && !$0.upgraded && !$0.closed }
    }

    /// The packet for a poll, if there is anything to say.
    ///
    /// What it takes from the session's queue is numbered under the transport's lock, so
    /// packets are numbered in the order they were taken and the one with `n` is the last:
    /// the SDK reads packets in number order, stops after the one with `n` and drops the rest,
    /// so a poll that took a listen's `ok` just before `n` must not be numbered after it.
    func packet(for poll: Int) -> String? {
        var (messages, closing, upgrading) = ([ByteBuffer](), false, false)
        var waiters: [CheckedContinuation<Bool, Never>] = []
        let number = state.withLock { state -> Int? in
            if state.upgraded || state.closed { return nil }
            switch session.outbound.takeNow() {
            case .events(let events): messages = events.map(\.bytes)
            case .closed(let final):
                messages = final
                closing = true
            case .resync: closing = true
            case .keepAlive, nil: break
            }
            if state.upgradeRequested {
                messages.append(ByteBuffer(bytes: Array(#"{"t":"c","d":{"t":"n","d":{}}}"#.utf8)))
                (closing, upgrading) = (true, true)
            }
            guard !messages.isEmpty || closing else { return nil }
            defer { state.nextPacket += 1 }
            if closing {
                if upgrading { state.upgraded = true } else { state.closed = true }
                waiters = state.upgradeWaiters
                state.upgradeWaiters = []
            }
            return state.nextPacket
        }
        guard let number else { return nil }
        packetTaken?()
        for waiter in waiters { waiter.resume(returning: upgrading) }
        var script = "pRTLPCB(\(number),["
        script += messages.map { String(buffer: $0) }.joined(separator: ",")
        script += "]);"
        if closing { script += "pLPCommand('close',\(number));" }
        return script
    }

    /// Waits until the client's `n` has been answered here (true: the WebSocket now carries the
    /// session) or this transport closed without upgrading (false).
    func waitForUpgrade() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool? in
                if state.upgraded { return true }
                if state.closed { return false }
                state.upgradeWaiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    var isUpgraded: Bool { state.withLock(\.upgraded) }

    /// True once this transport has closed without an upgrade: its session is over.
    var isClosed: Bool { state.withLock { $0.closed && !$0.upgraded } }

    /// A WebSocket that was to take over has gone: whoever waits for the upgrade stops waiting
    /// (long-polling goes on; the client may try again).
    func abandonUpgradeWaits() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            defer { state.upgradeWaiters = [] }
            return state.upgradeWaiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// True when the client has not polled for `idle` milliseconds and has not moved to a
    /// WebSocket: it is gone (a closed tab sends nothing).
    func isAbandoned(now: Int64, idle: Int64) -> Bool {
        state.withLock { !$0.upgraded && now - $0.lastSeen > idle }
    }

    /// The connection of a waiting poll closed before its answer: the browser dropped it, so
    /// the client is gone (unless it has moved to its WebSocket).
    func pollAbandoned() {
        guard !isUpgraded else { return }
        markClosed()
        session.outbound.wake()
    }

    /// Stops answering: the next poll is told to close.
    func markClosed() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.upgradeWaiters = [] }
            return state.upgradeWaiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}
