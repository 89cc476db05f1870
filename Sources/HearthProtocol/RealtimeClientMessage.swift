import HearthCore

/// A message from a realtime client (docs/protocol.md §4–§7), read from the JSON of one whole
/// message (after ``RealtimeFrameAssembler``). Free of I/O.
///
/// Data messages are `{"t":"d","d":{"r":<id>,"a":<action>,"b":<body>}}`; control messages
/// are `{"t":"c","d":{"t":<type>,"d":<payload>}}`.
public enum RealtimeClientMessage: Sendable {
    /// A request the server answers under its id (`r`), in order.
    case request(id: Int64, RealtimeRequest)
    /// A request whose body the server cannot read: answered under its id with the error; the
    /// connection stays.
    case rejected(id: Int64, RealtimeProtocolError)
    /// `{"t":"c","d":{"t":"p"}}`: answered with a pong.
    case ping
    /// Another control message (upgrade handshakes `n`/`a`, …): nothing to answer.
    case control(String)

    /// Reads one message.
    /// - Throws: ``RealtimeProtocolError/malformed(_:)`` when it is not a message of the protocol.
    public static func parse(_ text: String) throws(RealtimeProtocolError) -> RealtimeClientMessage {
        let bytes = Array(text.utf8)
        let envelope = try RealtimeFields(bytes, in: 0..<bytes.count, what: "message")
        switch try envelope.string("t") {
        case "c":
            let control = try envelope.object("d")
            let type = try control.string("t")
            return type == "p" ? .ping : .control(type)
        case "d":
            let data = try envelope.object("d")
            guard case .int(let id) = try data.value("r") else { throw .malformed("r must be an integer request id.") }
            do {
                let action = try data.string("a")
                let body = try data.optionalObject("b") ?? RealtimeFields.empty(bytes)
                return .request(id: id, try RealtimeRequest(action: action, body: body))
            } catch {
                return .rejected(id: id, error)
            }
        case let other:
            throw .malformed("Unknown message type \(other).")
        }
    }
}
