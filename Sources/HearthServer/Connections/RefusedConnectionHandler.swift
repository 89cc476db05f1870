import HearthEngine
import NIOCore

/// The whole pipeline of a connection ``ConnectionGate`` refused: as it opens, it is answered
/// at once (`503` when the server is full, `429` when its address holds too many) and closed,
/// without reading a request.
///
/// Closed at once, not after reading the request: lingering would hold the very descriptor the
/// limit protects. A client that already sent its request may see the connection reset before
/// it reads the answer; either way it is not served.
final class RefusedConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let refusal: ConnectionCounts.Refusal
    private var answered = false

    init(_ refusal: ConnectionCounts.Refusal) {
        self.refusal = refusal
    }

    /// The answer, as bytes on the wire.
    static func response(for refusal: ConnectionCounts.Refusal) -> String {
        let (status, text) = switch refusal {
        case .serverFull: ("503 Service Unavailable", "The server has too many connections.\n")
        case .addressFull: ("429 Too Many Requests", "Too many connections from this address.\n")
        }
        return "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n"
            + "Retry-After: 5\r\nConnection: close\r\n\r\n\(text)"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { answer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        answer(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Whatever the client sent is not read.
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let bytes = context.channel.allocator.buffer(string: Self.response(for: refusal))
        context.writeAndFlush(wrapOutboundOut(bytes)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension RefusedConnectionHandler: Sendable {}
