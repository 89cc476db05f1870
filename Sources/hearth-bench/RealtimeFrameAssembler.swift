import NIOCore
import NIOWebSocket

/// Whole realtime-protocol messages out of WebSocket frames, as the SDKs read them: a message
/// may span continuation frames, and a long one comes as Firebase chunks, a frame of at most
/// six digits announcing how many frames follow (reference §7.2).
struct RealtimeFrameAssembler {
    private var frameBytes: [UInt8] = []
    private var chunks: [UInt8] = []
    private var chunksLeft = 0

    /// The message `frame` (a text or continuation frame) completes, if it completes one.
    mutating func message(completedBy frame: WebSocketFrame) -> [UInt8]? {
        var data = frame.unmaskedData
        frameBytes += data.readBytes(length: data.readableBytes) ?? []
        guard frame.fin else { return nil }
        let text = frameBytes
        frameBytes = []
        if chunksLeft == 0, text.count <= 6, let count = Int(String(decoding: text, as: UTF8.self)) {
            chunksLeft = count
            return nil
        }
        guard chunksLeft > 0 else { return text }
        chunks += text
        chunksLeft -= 1
        guard chunksLeft == 0 else { return nil }
        defer { chunks = [] }
        return chunks
    }

    /// The answer to a server's ping (the server closes a socket that misses one).
    static func pong(to ping: WebSocketFrame) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: ping.unmaskedData)
    }
}
