import Foundation
import HearthCore

/// A server that says what the real one said to the official SDK in a recorded transcript,
/// to a sync core that may number its requests and tags its own way:
///
/// - an answer (`d.r`) goes out when the core has sent the same request as the SDK's: the
///   same action, path, query (a missing one is `{}`; see ``SDKQueryObject``) and, for writes,
///   data; under the core's request number. Answers to requests the core never makes (the
///   SDK's statistics) wait forever; requests sent on a socket that closed are never answered.
/// - a push for a query's listen (`b.t`) goes out with the core's tag for that path and query.
/// - other pushes and control messages go out as they are.
///
/// The server skips sending a listen's data when the client's hash of it matches, so when the
/// core's listen carried another hash than the SDK's, the data the SDK was spared is sent
/// before the answer, from a mirror of the server's data: the scenario's initial value with
/// every write that either client had acknowledged applied.
struct ScriptedServer {
    /// What identifies a request across two clients.
    struct Signature: Hashable, CustomStringConvertible {
        let action: String
        let path: String
        let query: JSONValue?
        let data: JSONValue?

        /// - Parameter core: true for a request of the core, whose query is turned into the SDK's form.
        init(action: String, body: JSONValue, core: Bool = false) {
            self.action = action
            path = (body["p"]?.string ?? "").split(separator: "/").joined(separator: "/")
            switch action {
            case "q", "n", "g":
                let query = body["q"] ?? .object([:])
                self.query = core ? SDKQueryObject.from(query) : query
            default: query = nil
            }
            switch action {
            case "p", "m", "o", "om": data = body["d"] ?? .null
            default: data = nil
            }
        }

        /// The listen this is the signature of, whatever the request (for tags).
        var listen: Signature { Signature(action: "q", path: path, query: query) }

        private init(action: String, path: String, query: JSONValue?) {
            self.action = action
            self.path = path
            self.query = query
            self.data = nil
        }

        var description: String {
            "\(action) /\(path)" + (query.map { " q=\($0)" } ?? "") + (data.map { " d=\($0)" } ?? "")
        }

        // JSONValue holds doubles: hash the text.
        func hash(into hasher: inout Hasher) {
            hasher.combine(action)
            hasher.combine(path)
            hasher.combine(query?.json)
            hasher.combine(data?.json)
        }
    }

    /// A request as sent, with what the server needs to answer it.
    private struct Sent {
        let signature: Signature
        /// A listen's hash of the data the client holds.
        let hash: String?
        let tag: Int64?
    }

    /// The SDK's requests, by socket and number, as the timeline shows them sent.
    private var sdkRequests: [Int: [Int64: Sent]] = [:]
    /// The SDK's listen tags and what they listen to.
    private var sdkTags: [Int64: Signature] = [:]
    /// The core's tags by listen.
    private var coreTags: [Signature: Int64] = [:]
    /// The core's requests on its open socket not answered yet, oldest first.
    private var unanswered: [(id: Int64, sent: Sent)] = []
    /// Answers whose request the core has not sent (yet).
    private var waiting: [(signature: Signature, message: JSONValue)] = []
    /// The server's data as far as the transcript tells.
    private var mirror: Node
    /// Both clients' writes not answered yet, by "connection socket number".
    private var writes: [String: (path: Path, data: JSONValue, merge: Bool)] = [:]
    /// The server's clock at the last handshake (for server timestamps in the mirror).
    private var now: Int64 = 0
    /// What was dropped, for a failing test's report.
    private(set) var notes: [String] = []

    init(initial: JSONValue, root: String) {
        let value = (try? JSONParser.parse(Array(initial.json.utf8)).node) ?? .null
        mirror = Node.null.setting(value, at: Path(keys: Path.keys(splitting: root)))
    }

    // MARK: - The transcript

    /// A client sent `message` on `socket` (a `send` entry).
    mutating func clientSent(_ message: JSONValue, connection: String, socket: Int) {
        guard let request = message["d"], let id = request["r"]?.int, let action = request["a"]?.string else { return }
        let body = request["b"] ?? .object([:])
        if action == "p" || action == "m" {
            writes["\(connection) \(socket) \(id)"] = (Self.path(body["p"]?.string), body["d"] ?? .null, action == "m")
        }
        guard connection == "local" else { return }
        let signature = Signature(action: action, body: body)
        sdkRequests[socket, default: [:]][id] = Sent(signature: signature, hash: body["h"]?.string, tag: body["t"]?.int)
        if action == "q", let tag = body["t"]?.int { sdkTags[tag] = signature.listen }
    }

    /// The server sent `message` to a client on `socket` (a `receive` entry); returns what to
    /// give the core now (nothing for the remote client).
    mutating func serverSent(_ message: JSONValue, connection: String, socket: Int) -> [String] {
        observe(message, connection: connection, socket: socket)
        guard connection == "local" else { return [] }
        guard message["t"]?.string == "d", let payload = message["d"] else { return [message.json] }
        if let id = payload["r"]?.int {
            guard let sdk = sdkRequests[socket]?[id] else {
                notes.append("an answer to request \(id), which the SDK did not send on socket \(socket)")
                return []
            }
            guard let index = unanswered.firstIndex(where: { $0.sent.signature == sdk.signature }) else {
                waiting.append((sdk.signature, message))
                return []
            }
            let request = unanswered.remove(at: index)
            return answer(message, to: request.id, sdk: sdk, core: request.sent)
        }
        guard let tag = payload["b"]?["t"]?.int else { return [message.json] }
        guard let listen = sdkTags[tag], let coreTag = coreTags[listen] else {
            notes.append("a push for the SDK's tag \(tag) (\(sdkTags[tag]?.description ?? "unknown")), which the core does not listen to")
            return []
        }
        return [Self.retagged(message, coreTag)]
    }

    /// Keeps the mirror: the server's clock from handshakes, acknowledged writes applied.
    private mutating func observe(_ message: JSONValue, connection: String, socket: Int) {
        if let timestamp = message["d"]?["d"]?["ts"]?.int { now = timestamp }
        guard let payload = message["d"], let id = payload["r"]?.int,
            let write = writes.removeValue(forKey: "\(connection) \(socket) \(id)"), payload["b"]?["s"]?.string == "ok"
        else { return }
        guard let data = try? JSONParser.parse(Array(write.data.json.utf8)).node else { return }
        let entries: [(Path, Node)]
        if write.merge, case .object(let members) = write.data {
            entries = members.compactMap { key, value in
                (try? JSONParser.parse(Array(value.json.utf8)).node).map { (write.path.appending(Self.path(key)), $0) }
            }
        } else {
            entries = [(write.path, data)]
        }
        for (path, value) in entries {
            let resolved = (try? ServerValues.resolve(value, existing: mirror.child(at: path), now: now)) ?? value
            mirror = mirror.setting(resolved, at: path)
        }
    }

    // MARK: - The core

    /// The core sent `text` on its socket; returns the answers that were waiting for it.
    mutating func coreSent(_ text: String) -> [String] {
        guard let message = try? JSONValue(json: text), let request = message["d"], let id = request["r"]?.int,
            let action = request["a"]?.string
        else { return [] }
        let body = request["b"] ?? .object([:])
        let sent = Sent(signature: Signature(action: action, body: body, core: true), hash: body["h"]?.string, tag: body["t"]?.int)
        if action == "q", let tag = sent.tag { coreTags[sent.signature.listen] = tag }
        if action == "n" { coreTags[sent.signature.listen] = nil }
        if let index = waiting.firstIndex(where: { $0.signature == sent.signature }) {
            let answer = waiting.remove(at: index)
            return [Self.renumbered(answer.message, id)]
        }
        unanswered.append((id, sent))
        return []
    }

    /// The core's socket closed: what it sent on it is never answered.
    mutating func coreDisconnected() {
        unanswered = []
    }

    /// The answer to a core's request, under its number; a listen answered `ok` whose hash
    /// differs from the SDK's gets the data first.
    private func answer(_ message: JSONValue, to id: Int64, sdk: Sent, core: Sent) -> [String] {
        let renumbered = Self.renumbered(message, id)
        guard core.signature.action == "q", core.hash != sdk.hash, message["d"]?["b"]?["s"]?.string == "ok" else {
            return [renumbered]
        }
        let path = Path(keys: Path.keys(splitting: core.signature.path))
        var body: [(String, String)] = [
            ("p", JSONWriter.string(.string(core.signature.path))),
            ("d", JSONWriter.string(mirror.child(at: path), format: .init(export: true))),
        ]
        if let tag = core.tag { body.append(("t", String(tag))) }
        let push = #"{"t":"d","d":{"a":"d","b":{"# + body.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}}}"
        return [push, renumbered]
    }

    /// The requests the SDK made that the core has not (with answers waiting), for a report.
    var unmatched: [String] { waiting.map(\.signature.description).filter { !$0.hasPrefix("s ") } }

    // MARK: - Rewriting

    private static func path(_ text: String?) -> Path { Path(keys: Path.keys(splitting: text ?? "")) }

    private static func renumbered(_ message: JSONValue, _ id: Int64) -> String {
        guard case .object(var envelope) = message, case .object(var payload)? = envelope["d"] else { return message.json }
        payload["r"] = .number(Double(id))
        envelope["d"] = .object(payload)
        return JSONValue.object(envelope).json
    }

    private static func retagged(_ message: JSONValue, _ tag: Int64) -> String {
        guard case .object(var envelope) = message, case .object(var payload)? = envelope["d"],
            case .object(var body)? = payload["b"]
        else { return message.json }
        body["t"] = .number(Double(tag))
        payload["b"] = .object(body)
        envelope["d"] = .object(payload)
        return JSONValue.object(envelope).json
    }
}
