import HearthCore
import HearthProtocol
import NIOCore

/// One event of the listeners at one location, encoded at most once per format and shared by
/// every listener there that uses the format.
struct ListenerEncoding {
    let event: ListenerEvent
    let location: Path
    private var serverSentEvents: ByteBuffer?
    private var realtime: ByteBuffer?

    init(_ event: ListenerEvent, at location: Path) {
        self.event = event
        self.location = location
    }

    /// The event's bytes for a listener that writes `format`.
    mutating func bytes(for format: ListenerFormat) -> ByteBuffer {
        switch format {
        case .serverSentEvents:
            if let serverSentEvents { return serverSentEvents }
            let bytes = SSEEncoding.encode(event)
            serverSentEvents = bytes
            return bytes
        case .realtime:
            if let realtime { return realtime }
            let bytes = ByteBuffer(bytes: Self.realtimeMessage(event, at: location))
            realtime = bytes
            return bytes
        }
    }

    /// A realtime data push for `event` of a listen at `location`: at the absolute path written.
    static func realtimeMessage(_ event: ListenerEvent, at location: Path) -> [UInt8] {
        let export = JSONWriter.Format(export: true)
        switch event {
        case .put(let path, let data):
            return RealtimeServerMessage.dataPush(
                path: location.appending(path), encodedData: JSONWriter.bytes(data, format: export))
        case .patch(let path, let entries):
            return RealtimeServerMessage.dataPush(
                path: location.appending(path), encodedData: JSONWriter.updateObject(entries, format: export), merge: true)
        }
    }

    /// A query listener's whole new result, as its format writes it.
    static func queryResult(_ result: Node, for listener: Listener) -> ByteBuffer {
        switch listener.format {
        case .serverSentEvents:
            return SSEEncoding.encode(.put(path: .root, data: result))
        case .realtime(let tag, _):
            return ByteBuffer(bytes: RealtimeServerMessage.dataPush(
                path: listener.path, encodedData: JSONWriter.bytes(result, format: .init(export: true)), tag: tag))
        }
    }
}
