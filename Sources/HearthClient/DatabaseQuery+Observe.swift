import AsyncHTTPClient
import HearthCore
import NIOCore
import NIOHTTP1

extension DatabaseQuery {
    /// Events of one type, as an `AsyncSequence`: `for try await event in ref.observe(.childAdded)`.
    /// Ending the loop ends the subscription.
    public func observe(_ type: DataEventType) -> AsyncThrowingStream<DataEvent, any Error> {
        observe([type])
    }

    /// Events of the given types, in the order Firebase's SDKs give them for each change:
    /// child removed, added, moved and changed, then the value.
    ///
    /// The subscription is a Server-Sent Events stream; when the connection drops it reconnects
    /// by itself and the events make up for what changed meanwhile. It ends with an error when
    /// the rules stop allowing the read (``HearthClientError/Kind-swift.enum/permissionDenied``).
    /// At most `bufferLimit` events wait for a slow consumer; older ones are dropped beyond that.
    public func observe(_ types: Set<DataEventType>, bufferLimit: Int = 10_000) -> AsyncThrowingStream<DataEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DataEvent, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferLimit))
        let listener = Task { [self] in
            do {
                var loop = ListenerLoop(query: self, types: types, continuation: continuation)
                try await loop.run()
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in listener.cancel() }
        return stream
    }
}

extension DatabaseReference {
    public func observe(_ type: DataEventType) -> AsyncThrowingStream<DataEvent, any Error> { query.observe(type) }

    public func observe(_ types: Set<DataEventType>) -> AsyncThrowingStream<DataEvent, any Error> { query.observe(types) }
}

/// Keeps one query's stream open, reconnecting after drops, and turns the server's put and
/// patch events into Firebase's value and child events.
struct ListenerLoop {
    let query: DatabaseQuery
    let types: Set<DataEventType>
    let continuation: AsyncThrowingStream<DataEvent, any Error>.Continuation
    /// The query's result as last seen; nil before the first answer.
    private var cache: Node?

    init(query: DatabaseQuery, types: Set<DataEventType>, continuation: AsyncThrowingStream<DataEvent, any Error>.Continuation) {
        self.query = query
        self.types = types
        self.continuation = continuation
    }

    mutating func run() async throws {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await connect()
                // The server ended the stream (auth_revoked or a clean close): reconnect now,
                // with a fresh token.
                backoff = .milliseconds(100)
            } catch let error as HearthClientError where error.kind == .permissionDenied || error.kind == .badRequest {
                throw error
            } catch is CancellationError {
                return
            } catch {
                // A dropped connection: try again, waiting longer each time (up to 5 s).
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    private mutating func connect() async throws {
        let database = query.database
        let url = database.url(for: query.path, parameters: query.parameters)
        let headers = try await database.authorizationHeaders() + [("Accept", "text/event-stream")]
        let response = try await database.transport.open(url, headers: headers)
        guard response.status.code == 200 else {
            let body = try await response.body.collect(upTo: 1 << 20)
            throw Database.error(HTTPTransport.Response(status: Int(response.status.code), headers: response.headers, body: body))
        }
        var parser = EventStreamParser()
        var pendingReset = true
        for try await buffer in response.body {
            for event in try parser.feed(buffer) {
                switch event.name {
                case "put", "patch":
                    try apply(event, resetting: pendingReset)
                    pendingReset = false
                case "cancel":
                    throw HearthClientError(.permissionDenied, status: 401, Self.text(event.data) ?? "Permission denied")
                case "auth_revoked":
                    return
                default:
                    break  // keep-alive
                }
            }
        }
    }

    private static func text(_ data: String) -> String? {
        guard case .string(let text)? = try? JSONParser.parse(Array(data.utf8)).node else { return nil }
        return text
    }

    /// Applies a put or patch to the cache and emits what it changed. The first event of a
    /// connection is the whole value, which replaces the cache.
    private mutating func apply(_ event: EventStreamParser.Event, resetting: Bool) throws {
        guard let payload = try? JSONParser.parse(Array(event.data.utf8)).node, case .string(let pathText) = payload.child(ChildKey("path")) else {
            throw HearthClientError(.unexpectedResponse, "The server sent a malformed \(event.name) event.")
        }
        let path = Path(keys: pathText.split(separator: "/").map { ChildKey(String($0)) })
        let data = payload.child(ChildKey("data"))
        var next = resetting ? Node.null : (cache ?? .null)
        if event.name == "put" {
            next = next.setting(data, at: path)
        } else if let children = data.children {
            for (key, value) in children {
                let relative = Path(keys: key.string.split(separator: "/").map { ChildKey(String($0)) })
                next = next.setting(value, at: path.appending(relative))
            }
        }
        let previous = cache
        cache = next
        for change in ChildChanges.events(from: previous, to: next, query: query, types: types) {
            continuation.yield(change)
        }
    }
}

/// The events a change from one result of a query to the next gives, in Firebase's order.
enum ChildChanges {
    static func events(from old: Node?, to new: Node, query: DatabaseQuery, types: Set<DataEventType>) -> [DataEvent] {
        let ref = query.ref
        var events: [DataEvent] = []
        let wantsChildren = !types.isDisjoint(with: [.childAdded, .childChanged, .childRemoved, .childMoved])
        if wantsChildren {
            let before = (old ?? .null).run(query.order)
            let after = new.run(query.order)
            var oldValues: [ChildKey: Node] = [:]
            for entry in before { oldValues[entry.key] = entry.value }
            var newValues: [ChildKey: Node] = [:]
            for entry in after { newValues[entry.key] = entry.value }
            // Each child's predecessor among the children present both before and after, to see moves.
            let common = Set(oldValues.keys).intersection(newValues.keys)
            func predecessors(_ list: [(key: ChildKey, value: Node)]) -> [ChildKey: ChildKey?] {
                var result: [ChildKey: ChildKey?] = [:]
                var last: ChildKey?
                for entry in list where common.contains(entry.key) {
                    result[entry.key] = last
                    last = entry.key
                }
                return result
            }
            let oldPredecessors = predecessors(before)
            let newPredecessors = predecessors(after)
            func child(_ key: ChildKey, _ node: Node) -> DataSnapshot { DataSnapshot(ref: ref.child(key.string), node: node) }
            if types.contains(.childRemoved) {
                for entry in before where newValues[entry.key] == nil {
                    events.append(DataEvent(type: .childRemoved, snapshot: child(entry.key, entry.value), previousSiblingKey: nil))
                }
            }
            var previousKey: String?
            var added: [DataEvent] = []
            var moved: [DataEvent] = []
            var changed: [DataEvent] = []
            for entry in after {
                defer { previousKey = entry.key.string }
                guard let oldValue = oldValues[entry.key] else {
                    added.append(DataEvent(type: .childAdded, snapshot: child(entry.key, entry.value), previousSiblingKey: previousKey))
                    continue
                }
                // Only a child whose own value changed can have moved (its sort value changed);
                // others shift around it.
                if oldValue != entry.value, oldPredecessors[entry.key] != newPredecessors[entry.key] {
                    moved.append(DataEvent(type: .childMoved, snapshot: child(entry.key, entry.value), previousSiblingKey: previousKey))
                }
                if oldValue != entry.value {
                    changed.append(DataEvent(type: .childChanged, snapshot: child(entry.key, entry.value), previousSiblingKey: previousKey))
                }
            }
            if types.contains(.childAdded) { events += added }
            if types.contains(.childMoved) { events += moved }
            if types.contains(.childChanged) { events += changed }
        }
        if types.contains(.value), old == nil || old! != new {
            events.append(DataEvent(type: .value, snapshot: DataSnapshot(ref: ref, node: new, order: query.order), previousSiblingKey: nil))
        }
        return events
    }
}
