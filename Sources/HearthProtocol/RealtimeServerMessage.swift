import HearthCore

/// The messages a realtime server sends (docs/protocol.md §5, §6, §9), as the JSON text of one message
/// (``RealtimeFrames`` splits it into frames). Data is written in export format (priorities
/// kept), as the SDKs read it; a payload already encoded once can be wrapped for many
/// connections without encoding it again.
public enum RealtimeServerMessage {
    /// The handshake, sent before anything else: the server's time in milliseconds, the host to
    /// reconnect to, and the session's ID.
    public static func handshake(timestamp: Int64, host: String, sessionID: String) -> [UInt8] {
        let body = Node.object([
            (ChildKey("h"), .string(host)), (ChildKey("s"), .string(sessionID)), (ChildKey("ts"), .int(timestamp)),
            (ChildKey("v"), .string("5")),
        ])
        return control("h", body)
    }

    /// The answer to a client's ping.
    public static let pong: [UInt8] = Array(#"{"t":"c","d":{"t":"o","d":{}}}"#.utf8)

    /// `a`: the server takes the session over on this socket (the upgrade from long-polling).
    public static let switchAcknowledged: [UInt8] = Array(#"{"t":"c","d":{"t":"a","d":{}}}"#.utf8)

    /// `r`: the client should reconnect to `host` (on an upgrade socket: give up the upgrade).
    public static func reset(host: String) -> [UInt8] { control("r", .string(host)) }

    /// `s`: the server is going away and the client should not reconnect at once.
    public static func shutdown(_ reason: String) -> [UInt8] { control("s", .string(reason)) }

    /// `e`: a fatal error the client logs before the connection closes.
    public static func error(_ text: String) -> [UInt8] { control("e", .string(text)) }

    /// The answer to request `id`: `ok` with optional data, or an error status (`permission_denied`,
    /// `datastale`, …) with its message.
    public static func response(id: Int64, status: String, data: Node = .null) -> [UInt8] {
        response(id: id, status: status, encodedData: JSONWriter.bytes(data, format: .init(export: true)))
    }

    /// The same with data already encoded as JSON.
    public static func response(id: Int64, status: String, encodedData: [UInt8]) -> [UInt8] {
        var bytes = Array(#"{"t":"d","d":{"r":"#.utf8)
        bytes += Array(String(id).utf8)
        bytes += Array(#","b":{"s":"#.utf8)
        bytes += JSONWriter.bytes(.string(status))
        bytes += Array(#","d":"#.utf8)
        bytes += encodedData
        bytes += Array("}}}".utf8)
        return bytes
    }

    /// `d` (an overwrite) or `m` (a merge of relative paths) at `path`, for the listen tagged
    /// `tag` when it is a query's; `data` is the JSON of the value (or of the merge object).
    public static func dataPush(path: Path, encodedData data: [UInt8], merge: Bool = false, tag: Int64? = nil) -> [UInt8] {
        var bytes = Array(#"{"t":"d","d":{"a":"#.utf8)
        bytes += Array((merge ? #""m""# : #""d""#).utf8)
        bytes += Array(#","b":{"p":"#.utf8)
        bytes += JSONWriter.bytes(.string(wirePath(path)))
        bytes += Array(#","d":"#.utf8)
        bytes += data
        if let tag { bytes += Array(#","t":"#.utf8) + Array(String(tag).utf8) }
        bytes += Array("}}}".utf8)
        return bytes
    }

    /// `c`: the client may no longer listen at `path` (to the query `queryObject`, as it sent it).
    public static func listenRevoked(path: Path, queryObject: [UInt8]?) -> [UInt8] {
        var bytes = Array(#"{"t":"d","d":{"a":"c","b":{"p":"#.utf8)
        bytes += JSONWriter.bytes(.string(wirePath(path)))
        if let queryObject { bytes += Array(#","q":["#.utf8) + queryObject + Array("]".utf8) }
        bytes += Array("}}}".utf8)
        return bytes
    }

    /// `ac`: the connection's credential stopped being valid (`expired_token`, …).
    public static func authRevoked(status: String, reason: String) -> [UInt8] {
        let body = Node.object([(ChildKey("d"), .string(reason)), (ChildKey("s"), .string(status))])
        var bytes = Array(#"{"t":"d","d":{"a":"ac","b":"#.utf8)
        bytes += JSONWriter.bytes(body)
        bytes += Array("}}".utf8)
        return bytes
    }

    /// A path as the SDKs read it: keys joined by `/`, the root empty.
    public static func wirePath(_ path: Path) -> String {
        path.keys.map(\.string).joined(separator: "/")
    }

    private static func control(_ type: String, _ payload: Node) -> [UInt8] {
        var bytes = Array(#"{"t":"c","d":{"t":"#.utf8)
        bytes += JSONWriter.bytes(.string(type))
        bytes += Array(#","d":"#.utf8)
        bytes += JSONWriter.bytes(payload)
        bytes += Array("}}".utf8)
        return bytes
    }
}
