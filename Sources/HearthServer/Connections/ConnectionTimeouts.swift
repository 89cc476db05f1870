import HearthEngine
import NIOCore

/// When an HTTP/1 connection has waited too long for its client (``ConnectionLimits``): the
/// decisions of ``ConnectionTimeoutHandler``, free of I/O. Every event carries its time.
///
/// What the connection waits for, and for how long:
/// - no request yet: the first request's complete head, ``ConnectionLimits/headerTimeout`` from
///   the start;
/// - a request's body: its next bytes, ``ConnectionLimits/bodyTimeout`` from the last ones, but
///   only while the server asks for more (a server holding back is not the client's delay);
/// - a response being written (an event stream, a long poll, a download): nothing;
/// - a response written, none in flight: the next request's complete head,
///   ``ConnectionLimits/idleTimeout`` from that response's end.
struct ConnectionTimeouts: Sendable {
    /// What the connection was waiting for when it timed out (the metrics' `phase`).
    enum Phase: String, Sendable, Equatable {
        case head, body, idle
    }

    let headerTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    let idleTimeout: TimeAmount
    /// Requests whose head arrived and whose response has not ended.
    private var inFlight = 0
    /// A request's head arrived and its end has not.
    private var readingBody = false
    /// A response has ended: from then on a wait for a head is the idle wait.
    private var served = false
    /// The server has asked for more input and not yet had it all.
    private var readPending = true
    /// When the current wait began.
    private var since: NIODeadline

    init(limits: ConnectionLimits, now: NIODeadline) {
        headerTimeout = TimeAmount(limits.headerTimeout)
        bodyTimeout = TimeAmount(limits.bodyTimeout)
        idleTimeout = TimeAmount(limits.idleTimeout)
        since = now
    }

    /// The moment the connection times out as things stand, and over what; nil while nothing
    /// is awaited from the client.
    var deadline: (time: NIODeadline, phase: Phase)? {
        if readingBody { return readPending ? (since + bodyTimeout, .body) : nil }
        if inFlight > 0 { return nil }
        return served ? (since + idleTimeout, .idle) : (since + headerTimeout, .head)
    }

    /// The phase that timed out, if the deadline has passed at `now`.
    func expired(at now: NIODeadline) -> Phase? {
        guard let deadline, deadline.time <= now else { return nil }
        return deadline.phase
    }

    mutating func headReceived(at now: NIODeadline) {
        inFlight += 1
        readingBody = true
        since = now
    }

    mutating func bodyReceived(at now: NIODeadline) {
        since = now
    }

    mutating func endReceived(at now: NIODeadline) {
        readingBody = false
        since = now
    }

    mutating func responseEnded(at now: NIODeadline) {
        inFlight = max(0, inFlight - 1)
        if inFlight == 0 {
            served = true
            since = now
        }
    }

    /// The server asks for more input. A body's clock restarts if the server had stopped
    /// asking: the wait was the server's.
    mutating func readRequested(at now: NIODeadline) {
        if !readPending, readingBody { since = now }
        readPending = true
    }

    /// What was read so far has been passed on; until the server asks again, it wants no more.
    mutating func readCompleted() {
        readPending = false
    }
}
