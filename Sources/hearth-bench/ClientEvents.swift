import ArgumentParser
import Foundation
import HearthClient
import Synchronization

/// Runs one event scenario of `Tests/Events` through Hearth's Swift client (two `Database`s on
/// one namespace: the local one runs every step, the remote one the `remote` steps) and
/// prints the events each listener reported, step by step, as JSON. The contract is written
/// in `Tests/Events/test_swift_client.py`.
struct ClientEvents: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-events",
        abstract: "Run an event scenario (Tests/Events) through the Swift client and print the events its listeners report."
    )

    @Option(help: "The server, such as http://127.0.0.1:9000.") var url: String
    @Option(help: "The database (ns), prepared with the scenario's rules and initial value.") var ns: String
    @Option(help: "The scenario file (JSON).") var scenario: String

    static let stepTimeout: Duration = .seconds(10)

    /// The events of the step running when they were reported.
    final class Recorder: Sendable {
        private let state: Mutex<(current: Int, steps: [[JSONObject]])>

        init(steps: Int) { state = Mutex((-1, Array(repeating: [], count: steps))) }

        func begin(_ step: Int) { state.withLock { $0.current = step } }

        func record(_ event: [String: Any]) {
            let boxed = JSONObject(event)
            state.withLock { state in
                guard state.current >= 0 else { return }
                state.steps[state.current].append(boxed)
            }
        }

        var steps: [[[String: Any]]] { state.withLock { $0.steps }.map { $0.map(\.value) } }
    }

    /// A JSON object passed between tasks (parsed JSON is never mutated after parsing).
    struct JSONObject: @unchecked Sendable {
        let value: [String: Any]
        init(_ value: [String: Any]) { self.value = value }
    }

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        let data = try Data(contentsOf: URL(fileURLWithPath: scenario))
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let steps = document["steps"] as? [[String: Any]]
        else { throw ValidationError("\(scenario) is not a scenario") }
        let root = document["root"] as? String ?? "s"
        let barrierRoot = document["barrier"] as? String ?? "barrier"
        let local = Database(url: server, namespace: ns)
        let remote = steps.contains { $0["do"] as? String == "remote" } ? Database(url: server, namespace: ns) : nil
        let recorder = Recorder(steps: steps.count)
        var errors: [String?] = Array(repeating: nil, count: steps.count)
        var handles: [String: [(DatabaseQuery, DatabaseHandle)]] = [:]
        var online = true
        var barriers = 0
        var pending: [(String, Task<Void, any Error>)] = []

        stepLoop: for (index, step) in steps.enumerated() {
            recorder.begin(index)
            let action = step["do"] as? String ?? ""
            do {
                switch action {
                case "listen":
                    let id = step["id"] as? String ?? "L"
                    let query = try Self.query(local.reference(withPath: Self.join(root, step["path"])), step["query"] as? [String: Any] ?? [:])
                    for name in step["events"] as? [String] ?? ["value"] {
                        let handle = query.observe([try Self.eventType(name)], with: { event in
                            recorder.record(Self.record(event, listener: id))
                        }, withCancel: { error in
                            recorder.record(["listener": id, "type": "cancel", "key": NSNull(), "prev": NSNull(), "value": NSNull()])
                        })
                        handles[id, default: []].append((query, handle))
                    }
                case "unlisten":
                    for (query, handle) in handles.removeValue(forKey: step["id"] as? String ?? "") ?? [] {
                        query.removeObserver(withHandle: handle)
                    }
                case "remote":
                    guard let remote else { break }
                    var remoteStep = step
                    remoteStep["do"] = step["op"]
                    let sent = JSONObject(remoteStep)
                    try await Self.within("the remote \(step["op"] ?? "")") { try await Self.write(sent.value, on: remote, root: root) }
                case "offline":
                    local.goOffline()
                    online = false
                case "online":
                    local.goOnline()
                    online = true
                default:
                    let answer = try await Self.start(step, on: local, root: root)
                    let written = Task { try await answer() }
                    if online {
                        try await Self.within("the answer to the \(action)") { try await written.value }
                    } else {
                        pending.append((action, written))
                    }
                }
                if online {
                    barriers += 1
                    let barrier = local.reference(withPath: "\(barrierRoot)/\(barriers)").setValue(DatabaseValue(barriers))
                    try await Self.within("the barrier after step \(index)") { try await barrier.acknowledged() }
                }
                if action == "online" {
                    let answers = pending
                    pending = []
                    for (what, written) in answers {
                        try await Self.within("the answer to the \(what) made offline") { try await written.value }
                    }
                }
            } catch let timeout as StepTimeout {
                errors[index] = timeout.description
                for rest in (index + 1)..<steps.count { errors[rest] = "not run (an earlier step timed out)" }
                await local.waitForPendingEvents()
                break stepLoop
            } catch {
                errors[index] = "\(error)"
            }
            // Everything this step caused is reported before the next begins.
            await local.waitForPendingEvents()
        }
        recorder.begin(-1)
        let output: [String: Any] = ["steps": recorder.steps, "errors": errors.map { $0 ?? NSNull() as Any }]
        let json = try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys])
        FileHandle.standardOutput.write(json)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    // MARK: - Steps

    static func write(_ step: [String: Any], on database: Database, root: String) async throws {
        try await start(step, on: database, root: root)()
    }

    /// Makes the write now (its local events are raised before this returns, as in the SDKs)
    /// and returns how to wait for the server's answer.
    static func start(_ step: [String: Any], on database: Database, root: String) async throws -> @Sendable () async throws -> Void {
        let ref = database.reference(withPath: join(root, step["path"]))
        let write: DatabaseWrite
        switch step["do"] as? String ?? "" {
        case "set":
            let value = try databaseValue(step["value"])
            write = step.keys.contains("priority")
                ? ref.setValue(value, andPriority: try optionalValue(step["priority"])) : ref.setValue(value)
        case "update":
            guard let values = step["value"] as? [String: Any] else { throw ValidationError("an update needs an object") }
            var children: [String: DatabaseValue] = [:]
            for (path, value) in values { children[path] = try databaseValue(value) }
            write = ref.updateChildValues(children)
        case "remove":
            write = ref.removeValue()
        case "setPriority":
            write = ref.setPriority(try optionalValue(step["priority"]))
        case "transaction":
            let increment = (step["increment"] as? NSNumber)?.doubleValue ?? 1
            // The first run of the update is this step's; the answer may come much later.
            let (firstRun, ran) = AsyncStream<Void>.makeStream()
            let transaction = Task {
                try await ref.runTransaction { snapshot in
                    ran.yield()
                    return .success(DatabaseValue((snapshot.number ?? 0) + increment))
                }
            }
            for await _ in firstRun { break }
            return { _ = try await transaction.value }
        case let other:
            throw ValidationError("unknown step \(other)")
        }
        return { try await write.acknowledged() }
    }

    static func query(_ ref: DatabaseReference, _ spec: [String: Any]) throws -> DatabaseQuery {
        var query = ref.query
        switch spec["orderBy"] as? String {
        case nil: break
        case "key": query = query.queryOrderedByKey()
        case "value": query = query.queryOrderedByValue()
        case "priority": query = query.queryOrderedByPriority()
        case let order? where order.hasPrefix("child:"): query = query.queryOrdered(byChild: String(order.dropFirst(6)))
        case let order?: throw ValidationError("unknown orderBy \(order)")
        }
        typealias Bound = (DatabaseQuery, DatabaseValue, String?) -> DatabaseQuery
        let bounds: [(String, Bound)] = [
            ("startAt", { $0.queryStarting(atValue: $1, childKey: $2) }),
            ("startAfter", { $0.queryStarting(afterValue: $1, childKey: $2) }),
            ("endAt", { $0.queryEnding(atValue: $1, childKey: $2) }),
            ("endBefore", { $0.queryEnding(beforeValue: $1, childKey: $2) }),
            ("equalTo", { $0.queryEqual(toValue: $1, childKey: $2) }),
        ]
        for (name, apply) in bounds {
            guard let arguments = spec[name] as? [Any], !arguments.isEmpty else { continue }
            query = apply(query, try databaseValue(arguments[0]), arguments.count > 1 ? arguments[1] as? String : nil)
        }
        if let first = (spec["limitToFirst"] as? NSNumber)?.intValue { query = query.queryLimited(toFirst: first) }
        if let last = (spec["limitToLast"] as? NSNumber)?.intValue { query = query.queryLimited(toLast: last) }
        return query
    }

    static func record(_ event: DataEvent, listener: String) -> [String: Any] {
        let type: String
        switch event.type {
        case .value: type = "value"
        case .childAdded: type = "child_added"
        case .childChanged: type = "child_changed"
        case .childRemoved: type = "child_removed"
        case .childMoved: type = "child_moved"
        }
        let value = (try? JSONSerialization.jsonObject(with: Data(event.snapshot.exportValue.json.utf8), options: [.fragmentsAllowed]))
        let prev: Any = event.type == .value || event.type == .childRemoved ? NSNull() : (event.previousSiblingKey ?? NSNull())
        return [
            "listener": listener, "type": type, "key": event.snapshot.key ?? NSNull(), "prev": prev,
            "value": value ?? NSNull(),
        ]
    }

    static func eventType(_ name: String) throws -> DataEventType {
        switch name {
        case "value": return .value
        case "child_added": return .childAdded
        case "child_changed": return .childChanged
        case "child_removed": return .childRemoved
        case "child_moved": return .childMoved
        default: throw ValidationError("unknown event type \(name)")
        }
    }

    static func databaseValue(_ value: Any?) throws -> DatabaseValue {
        guard let value, !(value is NSNull) else { return .null }
        let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
        return try DatabaseValue(json: String(decoding: data, as: UTF8.self))
    }

    static func optionalValue(_ value: Any?) throws -> DatabaseValue? {
        guard let value, !(value is NSNull) else { return nil }
        return try databaseValue(value)
    }

    static func join(_ root: String, _ path: Any?) -> String {
        let rest = (path as? String ?? "").split(separator: "/").joined(separator: "/")
        return rest.isEmpty ? root : root + "/" + rest
    }

    // MARK: - Time limits

    struct StepTimeout: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    static func within(_ what: String, _ work: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await work(); return true }
            group.addTask { try await Task.sleep(for: stepTimeout); return false }
            guard let finished = try await group.next() else { return }
            group.cancelAll()
            if !finished { throw StepTimeout(what: what) }
        }
    }
}
