import HearthCore

/// The realtime protocol as a client speaks it (docs/protocol.md), free of I/O: the requests it
/// sends and the messages it reads.
enum RealtimeMessage: Sendable {
    /// The server's handshake: its time, and the session ID to name when reconnecting.
    case handshake(timestamp: Int64, sessionID: String?)
    /// The answer to request `id`: a status (`ok`, `permission_denied`, `datastale`, …) and data.
    case response(id: Int64, status: String, data: Node)
    /// Data for a listen: a whole value at `path`.
    case data(path: Path, value: Node, tag: Int64?)
    /// Data for a listen: new values at paths below `path` (keys may hold `/`).
    case merge(path: Path, children: [(path: Path, value: Node)], tag: Int64?)
    /// The server ended a listen (the rules no longer allow it).
    case listenRevoked(path: Path, query: String?)
    /// The connection's credential stopped being valid.
    case authRevoked(status: String, reason: String)
    /// The server is shutting down or asked the client to go elsewhere: reconnect later.
    case reset
    /// The server's pong, warnings and other notices with nothing to do.
    case ignored

    /// Reads one whole message (after the frames are reassembled).
    /// - Throws: ``HearthClientError`` (unexpectedResponse) for text that is not the protocol.
    static func parse(_ text: String) throws -> RealtimeMessage {
        let bytes = Array(text.utf8)
        if let merge = try parseMerge(bytes) { return merge }
        guard let envelope = try? JSONParser.parse(Array(text.utf8)).node, case .string(let kind)? = envelope.field("t") else {
            throw HearthClientError(.unexpectedResponse, "The server sent an unreadable message.")
        }
        let payload = envelope.child(ChildKey("d"))
        if kind == "c" {
            switch payload.field("t") {
            case .string("h")?:
                let body = payload.child(ChildKey("d"))
                let timestamp: Int64
                switch body.child(ChildKey("ts")) {
                case .int(let value): timestamp = value
                case .double(let value): timestamp = Int64(value)
                default: timestamp = 0
                }
                return .handshake(timestamp: timestamp, sessionID: body.field("s")?.stringValue)
            case .string("r")?, .string("s")?, .string("e")?:
                return .reset
            default:
                return .ignored
            }
        }
        guard kind == "d" else { return .ignored }
        if let request = payload.field("r") {
            guard case .int(let id) = request else { throw HearthClientError(.unexpectedResponse, "A response without its number.") }
            let body = payload.child(ChildKey("b"))
            return .response(id: id, status: body.field("s")?.stringValue ?? "", data: body.child(ChildKey("d")))
        }
        let body = payload.child(ChildKey("b"))
        switch payload.field("a")?.stringValue {
        case "d"?:
            let path = Self.path(body.field("p")?.stringValue ?? "")
            var tag: Int64?
            if case .int(let value)? = body.field("t") { tag = value }
            return .data(path: path, value: body.child(ChildKey("d")), tag: tag)
        case "c"?:
            var query: String?
            if case .object(let list)? = body.field("q"), let first = list.first?.value { query = JSONWriter.string(first) }
            return .listenRevoked(path: Self.path(body.field("p")?.stringValue ?? ""), query: query)
        case "ac"?:
            return .authRevoked(status: body.field("s")?.stringValue ?? "", reason: body.field("d")?.stringValue ?? "")
        default:
            return .ignored
        }
    }

    /// A merge push, `{"t":"d","d":{"a":"m","b":{"p":…,"d":{"a/b":…},"t":…}}}`, read member by
    /// member because its data's keys are paths, which are not valid keys of a value; nil for
    /// any other message.
    private static func parseMerge(_ bytes: [UInt8]) throws -> RealtimeMessage? {
        func members(_ range: Range<Int>) -> [String: Range<Int>] {
            guard let list = try? JSONParser.members(ofObject: bytes[range]) else { return [:] }
            var members: [String: Range<Int>] = [:]
            for member in list {
                members[member.key] = (member.value.lowerBound + range.lowerBound)..<(member.value.upperBound + range.lowerBound)
            }
            return members
        }
        let envelope = members(0..<bytes.count)
        guard let payloadRange = envelope["d"] else { return nil }
        let payload = members(payloadRange)
        guard let action = payload["a"], bytes[action].elementsEqual(#""m""#.utf8), let bodyRange = payload["b"] else { return nil }
        let body = members(bodyRange)
        guard let dataRange = body["d"], let pathRange = body["p"],
            case .string(let pathText)? = try? JSONParser.parse(bytes[pathRange]).node,
            let children = try? JSONParser.parseUpdate(bytes[dataRange])
        else { throw HearthClientError(.unexpectedResponse, "The server sent an unreadable merge.") }
        var tag: Int64?
        if let tagRange = body["t"], case .int(let value)? = try? JSONParser.parse(bytes[tagRange]).node { tag = value }
        return .merge(path: path(pathText), children: children.map { ($0.path, $0.value.node) }, tag: tag)
    }

    /// A path as the protocol writes it: keys joined by `/`.
    static func path(_ text: String) -> Path {
        Path(keys: Path.keys(splitting: text))
    }

    static func wirePath(_ path: Path) -> String {
        "/" + path.keys.map(\.string).joined(separator: "/")
    }

    /// A request: `{"t":"d","d":{"r":id,"a":action,"b":body}}`; `body` is JSON text.
    static func request(id: Int64, action: String, body: String) -> String {
        #"{"t":"d","d":{"r":"# + String(id) + #","a":"# + JSONWriter.string(.string(action)) + #","b":"# + body + "}}"
    }

    /// A JSON object from fields whose values are already JSON text (a null stays present).
    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { JSONWriter.string(.string($0.0)) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// JSON text of a value, priorities kept.
    static func json(_ node: Node) -> String {
        JSONWriter.string(node, format: .init(export: true))
    }
}

extension Node {
    /// A member of an object, or nil.
    fileprivate func field(_ key: String) -> Node? {
        let value = child(ChildKey(key))
        return value.isNull ? nil : value
    }

    fileprivate var stringValue: String? {
        if case .string(let text) = unprioritized { return text }
        return nil
    }
}
