import DequeModule
import NIOCore
import Synchronization

/// The bounded queue of encoded events waiting for one stream's (or realtime connection's) reader.
///
/// A reader that falls behind never makes it grow without bound: when more than
/// ``maxEvents`` events or ``maxBytes`` bytes are waiting, the queue is dropped and the reader
/// is told to resynchronise: a stream sends the current value as one `put`; a realtime
/// connection is closed, and its client reconnects and listens again. Answers to a client's own
/// requests are queued outside the bound (the connection bounds its requests instead).
public final class EventBuffer: Sendable {
    /// What the reader gets next.
    public enum Item {
        case events([(sequence: Int64, bytes: ByteBuffer)])
        case resync
        case keepAlive
        case closed([ByteBuffer])
    }

    /// The default bound on queued events before a reader is told to resynchronise.
    public static let maxEvents = 512
    /// The default bound on queued bytes (4 MiB) before a reader is told to resynchronise.
    public static let maxBytes = 4 << 20

    let maxEvents: Int
    let maxBytes: Int
    /// Called once when the queue overflows (the server's metrics count dropped streams).
    let onOverflow: (@Sendable () -> Void)?

    /// A queue bounded by `maxEvents` events and `maxBytes` bytes; `onOverflow` runs once when it overflows.
    public init(
        maxEvents: Int = EventBuffer.maxEvents, maxBytes: Int = EventBuffer.maxBytes,
        onOverflow: (@Sendable () -> Void)? = nil
    ) {
        self.maxEvents = maxEvents
        self.maxBytes = maxBytes
        self.onOverflow = onOverflow
    }

    private struct State {
        var events = Deque<(sequence: Int64, bytes: ByteBuffer)>()
        var bytes = 0
        var overflowed = false
        var keepAlive = false
        var closed = false
        var finalEvents: [ByteBuffer] = []
        var waiter: CheckedContinuation<Void, Never>?
        /// Called (once until the queue is next found empty) when there is something to take:
        /// a reader on an event loop, which takes with ``takeNow()`` rather than waiting.
        var readyHandler: (@Sendable () -> Void)?
        var readySignalled = false
    }

    private let state = Mutex(State())

    /// Queues one encoded event for the write (or batch) with sequence number `sequence`;
    /// an unbounded one (an answer to the reader's own request) never overflows the queue.
    func push(_ event: ByteBuffer, sequence: Int64, bounded: Bool = true) {
        let (waiter, ready, overflowedNow) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?, Bool) in
            guard !state.closed else { return (nil, nil, false) }
            if state.overflowed { return (nil, nil, false) }
            var overflowedNow = false
            if bounded, state.events.count >= maxEvents || state.bytes + event.readableBytes > maxBytes {
                state.events.removeAll()
                state.bytes = 0
                state.overflowed = true
                overflowedNow = true
                // Said even to a reader that is not taking now (its socket is full): it must act.
                state.readySignalled = false
            } else {
                state.events.append((sequence, event))
                if bounded { state.bytes += event.readableBytes }
            }
            defer { state.waiter = nil }
            return (state.waiter, Self.signalReady(&state), overflowedNow)
        }
        if overflowedNow { onOverflow?() }
        waiter?.resume()
        ready?()
    }

    /// Asks for `handler` to be called whenever there is something to take (see ``State``).
    public func setReadyHandler(_ handler: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state -> (@Sendable () -> Void)? in
            state.readyHandler = handler
            state.readySignalled = false
            return Self.hasWork(state) ? Self.signalReady(&state) : nil
        }
        ready?()
    }

    private static func signalReady(_ state: inout State) -> (@Sendable () -> Void)? {
        guard let handler = state.readyHandler, !state.readySignalled else { return nil }
        state.readySignalled = true
        return handler
    }

    /// Asks the reader to send a keep-alive if nothing else is waiting.
    public func pokeKeepAlive() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            state.keepAlive = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Ends the stream after `finalEvents` (such as `cancel`) are sent.
    public func close(with finalEvents: [ByteBuffer] = []) {
        let (waiter, ready) = state.withLock { state -> (CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
            guard !state.closed else { return (nil, nil) }
            state.closed = true
            state.finalEvents = finalEvents
            defer { state.waiter = nil }
            return (state.waiter, Self.signalReady(&state))
        }
        waiter?.resume()
        ready?()
    }

    /// Waits for something to send.
    public func next() async -> Item {
        while true {
            if let item = state.withLock({ Self.take(&$0) }) { return item }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Self.hasWork(state) { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// True when the reader fell too far behind and the queue was dropped.
    public var isOverflowed: Bool { state.withLock(\.overflowed) }

    /// What is waiting now, without waiting (a long-polling transport's poll).
    public func takeNow() -> Item? {
        state.withLock { state in
            let item = Self.take(&state)
            if item == nil { state.readySignalled = false }
            return item
        }
    }

    /// Waits until something is waiting or ``wake()`` is called; a second waiter wakes the first.
    public func waitForWork() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (ready, displaced) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                if Self.hasWork(state) { return (true, nil) }
                let displaced = state.waiter
                state.waiter = continuation
                return (false, displaced)
            }
            displaced?.resume()
            if ready { continuation.resume() }
        }
    }

    /// Wakes whoever waits (a poll that has been replaced or has waited long enough).
    public func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private static func hasWork(_ state: State) -> Bool {
        state.closed || state.overflowed || !state.events.isEmpty || state.keepAlive
    }

    private static func take(_ state: inout State) -> Item? {
        // What was queued before the close still goes out (a realtime answer before its `e`).
        if state.closed, !state.events.isEmpty, !state.overflowed {
            let events = Array(state.events)
            state.events.removeAll()
            state.bytes = 0
            return .events(events)
        }
        if state.closed {
            let final = state.finalEvents
            state.finalEvents = []
            return .closed(final)
        }
        if state.overflowed {
            state.overflowed = false
            state.keepAlive = false
            return .resync
        }
        if !state.events.isEmpty {
            let events = Array(state.events)
            state.events = Deque()
            state.bytes = 0
            state.keepAlive = false
            return .events(events)
        }
        if state.keepAlive {
            state.keepAlive = false
            return .keepAlive
        }
        return nil
    }
}
