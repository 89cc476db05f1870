import HearthProtocol
import NIOCore
import NIOWebSocket

/// Whole realtime-protocol messages out of WebSocket frames, as the SDKs read them: a
/// WebSocket message may span continuation frames, and the protocol's own chunking (a count,
/// then the chunks) is undone by ``HearthProtocol/RealtimeFrameAssembler``, the one the server
/// and the Swift client use.
struct RealtimeMessageReader {
    private var frameBytes: [UInt8] = []
    private var assembler = RealtimeFrameAssembler(maxMessageBytes: 256 << 20)

    /// The message `frame` (a text or continuation frame) completes, if it completes one.
    mutating func message(completedBy frame: WebSocketFrame) -> [UInt8]? {
        var data = frame.unmaskedData
        frameBytes += data.readBytes(length: data.readableBytes) ?? []
        guard frame.fin else { return nil }
        defer { frameBytes = [] }
        guard case .message(let text)? = try? assembler.receive(String(decoding: frameBytes, as: UTF8.self)) else { return nil }
        return Array(text.utf8)
    }

    /// The answer to a server's ping (the server closes a socket that misses one).
    static func pong(to ping: WebSocketFrame) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: ping.unmaskedData)
    }
}
