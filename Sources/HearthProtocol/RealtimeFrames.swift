/// The realtime protocol's framing (docs/protocol.md §3), free of I/O: every message is one JSON
/// object in a text frame; a message longer than 16,384 characters goes as a frame holding the
/// number of chunks, then the chunks. A bare `0` is a client's keep-alive.
public enum RealtimeFrames {
    /// The longest frame, in UTF-16 code units (JavaScript's string length, which the SDKs count).
    public static let maxFrameLength = 16_384

    /// The frames that carry `message`: the message itself, or a count and its chunks. Chunks
    /// never split a character.
    public static func frames(for message: String) -> [String] {
        guard message.utf16.count > maxFrameLength else { return [message] }
        var chunks: [String] = []
        var current = String.UnicodeScalarView()
        var length = 0
        for scalar in message.unicodeScalars {
            let width = scalar.utf16.count
            if length + width > maxFrameLength {
                chunks.append(String(current))
                current = String.UnicodeScalarView()
                length = 0
            }
            current.append(scalar)
            length += width
        }
        if !current.isEmpty { chunks.append(String(current)) }
        return [String(chunks.count)] + chunks
    }
}

/// Rebuilds one connection's messages from the text frames it receives.
public struct RealtimeFrameAssembler: Sendable {
    /// What a frame amounts to.
    public enum Received: Equatable, Sendable {
        /// A whole message.
        case message(String)
        /// The client's keep-alive (`0`): nothing to do.
        case keepAlive
        /// Part of a chunked message; more frames follow.
        case incomplete
    }

    /// The longest message accepted, in UTF-8 bytes.
    let maxMessageBytes: Int
    private var remainingChunks = 0
    private var pending = ""

    /// An assembler refusing messages past `maxMessageBytes` bytes.
    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Takes the next frame.
    /// - Throws: ``RealtimeFrameError`` for a chunk count that is out of range or a message
    ///   past ``maxMessageBytes``.
    public mutating func receive(_ frame: String) throws(RealtimeFrameError) -> Received {
        if remainingChunks > 0 {
            guard pending.utf8.count + frame.utf8.count <= maxMessageBytes else { throw .messageTooLarge }
            pending += frame
            remainingChunks -= 1
            guard remainingChunks == 0 else { return .incomplete }
            defer { pending = "" }
            return .message(pending)
        }
        // A frame of at most six characters that is a number announces chunks (0: keep-alive).
        if frame.utf8.count <= 6, let count = Int(frame) {
            if count == 0 { return .keepAlive }
            // Each chunk holds at least a byte; the sizes are checked as they arrive.
            guard count > 0, count <= maxMessageBytes else {
                throw .malformed("Invalid chunk count \(count).")
            }
            remainingChunks = count
            return .incomplete
        }
        guard frame.utf8.count <= maxMessageBytes else { throw .messageTooLarge }
        return .message(frame)
    }
}

/// Frames that do not make a message: a chunk count out of range, or a message too long.
public enum RealtimeFrameError: Error, Equatable, Sendable {
    case malformed(String)
    case messageTooLarge
}
