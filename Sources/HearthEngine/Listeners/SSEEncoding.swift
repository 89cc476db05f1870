import HearthCore
import NIOCore

/// Encodes Firebase's Server-Sent Events: `event: <name>\ndata: <json>\n\n`.
public enum SSEEncoding: Sendable {
    /// Sent on idle streams so proxies and clients keep the connection.
    public static let keepAlive = ByteBuffer(string: "event: keep-alive\ndata: null\n\n")
    /// `auth_revoked` carries unquoted text, which is what admin-python compares against.
    public static let authRevoked = ByteBuffer(string: "event: auth_revoked\ndata: credential is no longer valid\n\n")
    /// Cancels a stream whose location the rules no longer let its client read.
    public static let permissionDenied = ByteBuffer(string: "event: cancel\ndata: \"Permission denied\"\n\n")
    /// Cancels a stream whose data is too large to send, with Firebase's text.
    public static let payloadTooLarge = ByteBuffer(
        string: "event: cancel\ndata: \"The specified payload is too large, please request a location with less data.\"\n\n"
    )

    /// The largest event a stream is sent (Firebase: 512 MB); a bigger one cancels the stream.
    public static let maxEventBytes = 512 << 20

    /// True when an event would carry more data than a stream may be sent.
    static func isTooLarge(_ event: ListenerEvent, limit: Int = maxEventBytes) -> Bool {
        switch event {
        case .put(_, let data): return data.estimatedSize > limit
        case .patch(_, let entries): return entries.reduce(0) { $0 + $1.value.estimatedSize } > limit
        }
    }

    /// The bytes of one `put` or `patch` event.
    public static func encode(_ event: ListenerEvent) -> ByteBuffer {
        var bytes: [UInt8] = []
        switch event {
        case .put(let path, let data):
            bytes += Array("event: put\ndata: {\"path\":".utf8)
            bytes += JSONWriter.bytes(.string(path.description))
            bytes += Array(",\"data\":".utf8)
            bytes += JSONWriter.bytes(data)
        case .patch(let path, let entries):
            bytes += Array("event: patch\ndata: {\"path\":".utf8)
            bytes += JSONWriter.bytes(.string(path.description))
            bytes += Array(",\"data\":".utf8)
            bytes += JSONWriter.updateObject(entries)
        }
        bytes += Array("}\n\n".utf8)
        return ByteBuffer(bytes: bytes)
    }
}
