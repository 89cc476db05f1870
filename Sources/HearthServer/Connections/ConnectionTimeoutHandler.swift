import HTTPTypes
import HearthEngine
import NIOCore
import NIOHTTPTypes

/// Closes an HTTP/1 connection whose client takes too long to send a request's head or body,
/// or keeps it idle too long between requests (``ConnectionTimeouts`` decides; the event
/// loop's clock, `EventLoop.now`, times it).
///
/// It sits where Hummingbird's `HTTPConnectionStateHandler` does, after the HTTP codec, and
/// leaves graceful shutdown to that one; Hummingbird's own idle timeout is a single value that
/// restarts on any request part, where this one times the head, the body and the idle wait
/// separately and stops while a response is written (streams and long polls).
final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let onTimeout: @Sendable (ConnectionTimeouts.Phase) -> Void
    private var timeouts: ConnectionTimeouts?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?

    /// - Parameter onTimeout: told which wait timed out, as the connection closes (metrics).
    init(limits: ConnectionLimits, onTimeout: @escaping @Sendable (ConnectionTimeouts.Phase) -> Void = { _ in }) {
        self.limits = limits
        self.onTimeout = onTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The clock starts now: on the main port this handler is added as the first request's
        // head arrives, which the channel's own first-head deadline timed until then.
        timeouts = ConnectionTimeouts(limits: limits, now: context.eventLoop.now)
        reschedule(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = context.eventLoop.now
        switch unwrapInboundIn(data) {
        case .head: timeouts?.headReceived(at: now)
        case .body: timeouts?.bodyReceived(at: now)
        case .end: timeouts?.endReceived(at: now)
        }
        reschedule(context)
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        timeouts?.readCompleted()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        timeouts?.readRequested(at: context.eventLoop.now)
        reschedule(context)
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            timeouts?.responseEnded(at: context.eventLoop.now)
            reschedule(context)
        }
        context.write(data, promise: promise)
    }

    /// Makes sure a timer fires no later than the current deadline. A later deadline keeps the
    /// pending timer, which looks again when it fires: body bytes arriving one after another
    /// cost no rescheduling.
    private func reschedule(_ context: ChannelHandlerContext) {
        guard let deadline = timeouts?.deadline?.time else { return }
        if let timerDeadline, timerDeadline <= deadline { return }
        cancelTimer()
        timerDeadline = deadline
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timerFired(context)
        }
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        timer = nil
        timerDeadline = nil
        guard let timeouts else { return }
        if let phase = timeouts.expired(at: context.eventLoop.now) {
            onTimeout(phase)
            context.close(promise: nil)
        } else {
            reschedule(context)
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
    }
}

@available(*, unavailable)
extension ConnectionTimeoutHandler: Sendable {}
