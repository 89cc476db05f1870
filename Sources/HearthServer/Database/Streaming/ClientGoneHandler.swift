import HearthEngine
import NIOCore

/// Tells a stream that its client has gone.
///
/// Hummingbird allows half-closed connections, so a client that goes away (a closed tab, a
/// dropped network) only ends the input side: the connection stays open until the server next
/// writes. A stream that waits for events would otherwise notice only at its next keep-alive,
/// fanning events out to nobody until then. This handler sits first in the connection's
/// pipeline and reports the end of input as it happens.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let onGone: @Sendable () -> Void

    init(onGone: @escaping @Sendable () -> Void) {
        self.onGone = onGone
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent { onGone() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        onGone()
        context.fireChannelInactive()
    }
}
