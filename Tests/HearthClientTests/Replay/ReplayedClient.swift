import Foundation
import HearthCore

@testable import HearthClient

/// A ``SyncCore`` driven through a recorded transcript: the local client's calls are made on
/// it, its sockets open and close where the SDK's did, a ``ScriptedServer`` answers what it
/// sends, and the events it raises are recorded in the suite's shape, step by step. What the
/// engine would do with its actions is done here at once: transactions run (`(current ?? 0) +
/// increment`), the credential (none) is sent, timers are not needed and never fire.
struct ReplayedClient {
    private var core = SyncCore()
    private var server: ScriptedServer
    /// False once the core asked to close its socket (what it sends then is lost, as the
    /// engine's finished outbound stream drops it) until the next socket opens.
    private var socketOpen = false
    /// The device's clock: the server's time at the last handshake, so estimates are exact.
    private var now: Int64 = 0
    /// Each registration's listener (`L1`, …).
    private var listeners: [Int: String] = [:]
    private var registrations: [String: [Int]] = [:]
    /// Each transaction's increment.
    private var increments: [Int: Double] = [:]
    /// The `seq` of the call each write and transaction came from, and how they ended
    /// (true: accepted), by that `seq`.
    private var writeCalls: [Int64: Int] = [:]
    private var transactionCalls: [Int: Int] = [:]
    private(set) var outcomes: [Int: Bool] = [:]
    private var callSeq = 0
    /// The events of the step running, in the suite's shape.
    private(set) var events: [JSONValue] = []
    private(set) var problems: [String] = []

    init(_ transcript: RecordedTranscript) {
        server = ScriptedServer(initial: transcript.initial ?? .null, root: transcript.root)
    }

    /// Plays one step's timeline (or the setup's). The remote client's calls are not made:
    /// their effect on the local client is the server's pushes.
    mutating func play(_ timeline: [RecordedTranscript.Entry]) {
        events = []
        for entry in timeline.sorted(by: { $0.seq < $1.seq }) {
            let connection = entry.conn ?? ""
            switch entry.kind {
            case .call where entry.isLocal:
                callSeq = entry.seq
                if let call = entry.call { make(call) }
            case .open where entry.isLocal:
                socketOpen = true
                if !core.connecting() { problems.append("seq \(entry.seq): the core would not open a socket (offline)") }
            case .close where entry.isLocal:
                socketOpen = false
                server.coreDisconnected()
                perform(core.disconnected().actions)
            case .send:
                if let message = entry.message, let socket = entry.socket { server.clientSent(message, connection: connection, socket: socket) }
            case .receive:
                guard let message = entry.message, let socket = entry.socket else { continue }
                for text in server.serverSent(message, connection: connection, socket: socket) { receive(text) }
            default:
                break
            }
        }
    }

    var serverNotes: [String] { server.notes + server.unmatched.map { "never sent by the core: \($0)" } }

    // MARK: - Calls

    private mutating func make(_ call: JSONValue) {
        let path = Self.path(call["path"]?.string ?? "")
        do {
            switch call["do"]?.string {
            case "listen":
                let id = call["id"]?.string ?? "L"
                let query = try Self.query(call["query"] ?? .object([:]))
                guard case .array(let types)? = call["events"] else { return }
                for name in types {
                    let type = try Self.eventType(name.string ?? "")
                    let (registration, actions) = core.addListener(path: path, query: query, types: [type], cached: nil)
                    listeners[registration] = id
                    registrations[id, default: []].append(registration)
                    perform(actions)
                }
            case "unlisten":
                for registration in registrations.removeValue(forKey: call["id"]?.string ?? "") ?? [] {
                    perform(core.removeListener(registration))
                }
            case "set":
                var node = try Self.node(call["value"] ?? .null)
                if let priority = call["priority"] { node = node.withPriority(Self.priority(try Self.node(priority))) }
                write(path, .set(node))
            case "update":
                guard case .object(let members)? = call["value"] else { return }
                var entries: [(path: Path, value: Node)] = []
                for (key, value) in members.sorted(by: { $0.key < $1.key }) { entries.append((Self.path(key), try Self.node(value))) }
                if !entries.isEmpty { write(path, .merge(entries)) }
            case "remove":
                write(path, .set(.null))
            case "setPriority":
                let priority = try Self.node(call["priority"] ?? .null)
                write(path.appending(Path(keys: [ChildKey(".priority")])), .set(priority))
            case "transaction":
                let (id, actions) = core.startTransaction(at: path, applyLocally: true, cached: nil)
                increments[id] = call["increment"]?.number ?? 1
                transactionCalls[id] = callSeq
                perform(actions)
            case "offline":
                perform(core.setOnline(false))
            case "online":
                perform(core.setOnline(true))
            case let other:
                problems.append("an unknown call \(other ?? "nil")")
            }
        } catch {
            problems.append("the call \(call) failed: \(error)")
        }
    }

    private mutating func write(_ path: Path, _ change: PendingWrite.Change) {
        let (result, actions) = core.write(path, change, now: now)
        switch result {
        case .success(let id): writeCalls[id] = callSeq
        case .failure(let error): problems.append("a write at \(path) was refused: \(error)")
        }
        perform(actions)
    }

    // MARK: - The core's actions

    private mutating func receive(_ text: String) {
        guard let message = try? RealtimeMessage.parse(text) else { return problems.append("unreadable: \(text)") }
        if case .handshake(let timestamp, _) = message { now = timestamp }
        perform(core.receive(message, now: now))
    }

    private mutating func perform(_ actions: [SyncAction]) {
        for action in actions {
            switch action {
            case .send(let text):
                guard socketOpen else { continue }
                for answer in server.coreSent(text) { receive(answer) }
            case .closeConnection:
                socketOpen = false
            case .deliver(let delivered):
                for event in delivered { record(event) }
            case .cancel(let cancelled, _):
                for registration in cancelled {
                    guard let listener = listeners[registration] else { continue }
                    events.append(.object(["listener": .string(listener), "type": .string("cancel"), "key": .null, "prev": .null, "value": .null]))
                }
            case .runTransaction(let id):
                guard let input = core.transactionInput(id) else { continue }
                let output = Node.double((input.numberValue ?? 0) + (increments[id] ?? 1))
                perform(core.transactionRan(id, input: input, output: output, now: now))
            case .authenticate(_, let restoring):
                perform(core.authenticate(credential: nil, restoring: restoring))
            case .completeWrite(let id, let result):
                if let seq = writeCalls.removeValue(forKey: id) { outcomes[seq] = (try? result.get()) != nil }
            case .completeTransaction(let id, let result):
                if let seq = transactionCalls.removeValue(forKey: id) { outcomes[seq] = (try? result.get())?.committed == true }
            case .completeRequest, .completeGet, .answerGetFromCache, .status, .saveWrite, .removeSavedWrite, .saveCache, .arm:
                break
            }
        }
    }

    /// An event in the suite's shape: `{"listener", "type", "key", "prev", "value"}`.
    private mutating func record(_ event: ViewEvent) {
        guard let listener = listeners[event.registration] else { return }
        let type: String
        switch event.type {
        case .value: type = "value"
        case .childAdded: type = "child_added"
        case .childChanged: type = "child_changed"
        case .childRemoved: type = "child_removed"
        case .childMoved: type = "child_moved"
        }
        let value = (try? JSONValue(json: DatabaseValue(node: event.node).json)) ?? .null
        let previous: JSONValue =
            event.type == .value || event.type == .childRemoved ? .null : event.previousKey.map(JSONValue.string) ?? .null
        events.append(.object([
            "listener": .string(listener), "type": .string(type), "key": event.path.last.map { .string($0.string) } ?? .null,
            "prev": previous, "value": value,
        ]))
    }

    // MARK: - Reading calls

    static func path(_ text: String) -> Path { Path(keys: Path.keys(splitting: text)) }

    static func node(_ value: JSONValue) throws -> Node {
        try DatabaseValue(json: value.json).node
    }

    static func priority(_ node: Node) -> Priority? {
        switch node.unprioritized {
        case .int(let value): return .number(Double(value))
        case .double(let value): return .number(value)
        case .string(let value): return .string(value)
        default: return nil
        }
    }

    /// The query of a listen call, as the Swift client's query builders make it.
    static func query(_ spec: JSONValue) throws -> Query? {
        guard case .object(let members) = spec, !members.isEmpty else { return nil }
        var query = Query(order: .priority)
        switch spec["orderBy"]?.string {
        case nil, "priority": break
        case "key": query.order = .key
        case "value": query.order = .value
        case let order? where order.hasPrefix("child:"): query.order = .child(path(String(order.dropFirst("child:".count))))
        case let order?: throw ReplayError("unknown orderBy \(order)")
        }
        func bound(_ name: String, inclusive: Bool) throws -> Query.Bound? {
            guard case .array(let arguments)? = spec[name], let first = arguments.first else { return nil }
            let key = arguments.count > 1 ? arguments[1].string.map(ChildKey.init) : nil
            return Query.Bound(value: try node(first), key: key, inclusive: inclusive)
        }
        if let start = try bound("startAt", inclusive: true) { query.start = start }
        if let start = try bound("startAfter", inclusive: false) { query.start = start }
        if let end = try bound("endAt", inclusive: true) { query.end = end }
        if let end = try bound("endBefore", inclusive: false) { query.end = end }
        if let equal = try bound("equalTo", inclusive: true) {
            query.start = equal
            query.end = equal
        }
        if let first = spec["limitToFirst"]?.number { query.limit = .first(Int(first)) }
        if let last = spec["limitToLast"]?.number { query.limit = .last(Int(last)) }
        return query
    }

    static func eventType(_ name: String) throws -> DataEventType {
        switch name {
        case "value": return .value
        case "child_added": return .childAdded
        case "child_changed": return .childChanged
        case "child_removed": return .childRemoved
        case "child_moved": return .childMoved
        default: throw ReplayError("unknown event type \(name)")
        }
    }
}

struct ReplayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
