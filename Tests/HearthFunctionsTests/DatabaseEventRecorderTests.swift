import Foundation
import HearthCore
import HearthFunctions
import HearthOutbox
import HearthStore
import HearthTesting
import Synchronization
import Testing

/// The events database writes record for functions, through a real ``Database`` with the
/// recorder installed: which functions get which changes (event type, ref pattern, instance
/// pattern), the CloudEvent's attributes as Firebase sets them, its `data` (`before` and a
/// `delta` that rebuilds `after` when merged into it), and the backlog's bound.
struct DatabaseEventRecorderTests {
    static let clock: Int64 = 1_764_342_000_123

    /// Databases in a temporary folder whose writes go through one recorder.
    final class Fixture {
        let directory: TemporaryDirectory
        let recorder: DatabaseEventRecorder
        let backlog: EventBacklog
        private var opened: [Database] = []

        init(
            _ subscriptions: [(function: String, type: DatabaseTrigger.Change, ref: String, instance: String?)],
            backlog: EventBacklog = EventBacklog(limit: 1000)
        ) throws {
            directory = try TemporaryDirectory(prefix: "hearth-functions-recorder")
            self.backlog = backlog
            let counter = Mutex(0)
            recorder = DatabaseEventRecorder(backlog: backlog) {
                "evt-\(counter.withLock { $0 += 1; return $0 })"
            }
            recorder.setSubscriptions(try subscriptions.map { entry in
                DatabaseEventRecorder.Subscription(
                    function: entry.function,
                    trigger: try DatabaseTrigger(
                        eventType: entry.type.eventType, ref: entry.ref, instance: entry.instance, function: entry.function))
            })
        }

        func open(_ name: String = "test") throws -> Database {
            var options = DatabaseOptions(clock: { DatabaseEventRecorderTests.clock })
            options.eventRecorder = recorder
            let database = try Database(
                name: name, folder: directory.url.appendingPathComponent(name), options: options, logger: quietLogger)
            opened.append(database)
            return database
        }

        func close() {
            for database in opened { database.close() }
            directory.remove()
        }
    }

    static func set(_ database: Database, _ location: String, _ json: String, origin: WriteOrigin = .unknown) async throws {
        try await database.write(.set(try Path(parsing: location), try JSONParser.parse(Array(json.utf8))), origin: origin)
    }

    static func update(_ database: Database, _ base: String, _ entries: [(String, String)]) async throws {
        let parsed = try entries.map { (path: try Path(parsing: $0.0), value: try JSONParser.parse(Array($0.1.utf8))) }
        try await database.write(.update(try Path(parsing: base), parsed))
    }

    static let envelope = EventEnvelope(naming: .init(databaseHost: "db.example.test:9000"))

    /// The CloudEvents waiting for `function`, as they are delivered, parsed as JSON objects.
    static func events(for function: String, in database: Database) async throws -> [[String: Any]] {
        let outbox = try #require(database.outbox)
        return try await outbox.pending(for: function, after: 0, limit: 100).map { stored in
            try #require(try JSONSerialization.jsonObject(with: Data(envelope.structured(stored.event))) as? [String: Any])
        }
    }

    /// `type`'s last word and `ref` of each event, as `created posts/p1`.
    static func summary(for function: String, in database: Database) async throws -> [String] {
        try await events(for: function, in: database).map { event in
            "\((event["type"] as? String)?.split(separator: ".").last ?? "?") \(event["ref"] as? String ?? "?")"
        }
    }

    // MARK: - Which functions get which changes

    @Test func eachChangeTypeFiresOnlyForItsKindOfChangeAndOnlyUnderItsRef() async throws {
        let fixture = try Fixture([
            ("onWritten", .written, "posts/{postId}", nil), ("onCreated", .created, "posts/{postId}", nil),
            ("onUpdated", .updated, "posts/{postId}", nil), ("onDeleted", .deleted, "posts/{postId}", nil),
            ("onTitle", .written, "posts/{postId}/title", nil), ("onUsers", .written, "users/*", nil),
        ])
        defer { fixture.close() }
        let database = try fixture.open()
        try await Self.set(database, "/posts/p1", #"{"title": "a", "body": "x"}"#)
        try await Self.set(database, "/posts/p1/body", #""y""#)
        try await Self.set(database, "/posts/p1/body", #""y""#)  // no change: no event
        try await Self.set(database, "/elsewhere/p1", "1")
        try await Self.set(database, "/posts/p1", "null")
        try await Self.update(database, "/", [("posts/p2", "2"), ("posts/p3", "3")])

        #expect(try await Self.summary(for: "onWritten", in: database) == [
            "written posts/p1", "written posts/p1", "written posts/p1", "written posts/p2", "written posts/p3",
        ])
        #expect(try await Self.summary(for: "onCreated", in: database) == ["created posts/p1", "created posts/p2", "created posts/p3"])
        #expect(try await Self.summary(for: "onUpdated", in: database) == ["updated posts/p1"])
        #expect(try await Self.summary(for: "onDeleted", in: database) == ["deleted posts/p1"])
        #expect(try await Self.summary(for: "onTitle", in: database) == ["written posts/p1/title", "written posts/p1/title"])
        #expect(try await Self.summary(for: "onUsers", in: database).isEmpty)
    }

    @Test func instancePatternsChooseTheDatabasesWhoseWritesFire() async throws {
        let fixture = try Fixture([
            ("exact", .written, "a", "my-db"), ("any", .written, "a", "*"), ("defaulted", .written, "a", nil),
            ("prefixed", .written, "a", "my-*"), ("captured", .written, "a", "{db}"), ("elsewhere", .written, "a", "prod-*"),
        ])
        defer { fixture.close() }
        let mine = try fixture.open("my-db")
        let theirs = try fixture.open("other")
        let mineLater = try fixture.open("my-db-2")
        for database in [mine, theirs, mineLater] { try await Self.set(database, "/a", "1") }

        func receivers(_ database: Database) async throws -> [String] {
            var found: [String] = []
            for function in ["exact", "any", "defaulted", "prefixed", "captured", "elsewhere"] {
                let events = try await Self.events(for: function, in: database)
                #expect(events.allSatisfy { $0["instance"] as? String == database.name })
                if !events.isEmpty { found.append(function) }
            }
            return found
        }
        #expect(try await receivers(mine) == ["exact", "any", "defaulted", "prefixed", "captured"])
        #expect(try await receivers(theirs) == ["any", "defaulted", "captured"])
        #expect(try await receivers(mineLater) == ["any", "defaulted", "prefixed", "captured"])
        #expect(fixture.recorder.functions(watching: "prod-1") == ["any", "defaulted", "captured", "elsewhere"])
    }

    @Test func instancePatternsMatchAsFirebaseWritesThem() throws {
        let glob = try InstancePattern(parsing: "my-*-rtdb", function: "f")
        #expect(glob.matches("my-project-rtdb") && glob.matches("my--rtdb"))
        #expect(!glob.matches("my-project-rtdb-2") && !glob.matches("your-project-rtdb"))
        let capture = try InstancePattern(parsing: "{db}", function: "f")
        #expect(capture.matches("anything") && capture.parameters(for: "anything") == ["db": "anything"])
        #expect(try InstancePattern(parsing: "{db=*}", function: "f").capture == "db")
        let exact = try InstancePattern(parsing: "default", function: "f")
        #expect(exact.matches("default") && !exact.matches("default2") && exact.parameters(for: "default").isEmpty)
        for bad in ["", "a/b", "{db", "db}", "{}", "{a-b}"] {
            #expect(throws: FunctionError.self, "\(bad)") { try InstancePattern(parsing: bad, function: "f") }
        }
    }

    @Test func functionsWithTheSameTriggerShareOneEventAndOthersGetTheirOwn() async throws {
        let fixture = try Fixture([
            ("first", .written, "posts/{id}", nil), ("second", .written, "posts/{postId}", "*"), ("third", .created, "posts/{id}", nil),
        ])
        defer { fixture.close() }
        let database = try fixture.open()
        try await Self.set(database, "/posts/p1", "1")
        let first = try await Self.events(for: "first", in: database)
        let second = try await Self.events(for: "second", in: database)
        let third = try await Self.events(for: "third", in: database)
        #expect(first.count == 1 && second.count == 1 && third.count == 1)
        #expect(first.first?["id"] as? String == second.first?["id"] as? String)
        #expect(first.first?["id"] as? String != third.first?["id"] as? String)
    }

    // MARK: - The CloudEvent

    @Test func theCloudEventCarriesFirebasesAttributes() async throws {
        let fixture = try Fixture([("onPost", .created, "posts/{postId}", nil)])
        defer { fixture.close() }
        let database = try fixture.open("my-db")
        try await Self.set(database, "/posts/p1", #"{"text": "hi"}"#, origin: .user("ann"))
        try await Self.set(database, "/posts/p2", "2", origin: .admin)
        let events = try await Self.events(for: "onPost", in: database)
        try #require(events.count == 2)
        let event = events[0]
        #expect(event["specversion"] as? String == "1.0")
        #expect(event["id"] as? String == "evt-1")
        #expect(event["type"] as? String == "google.firebase.database.ref.v1.created")
        #expect(event["source"] as? String == "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/my-db")
        #expect(event["subject"] as? String == "refs/posts/p1")
        #expect(event["ref"] as? String == "posts/p1")
        #expect(event["instance"] as? String == "my-db")
        #expect(event["firebasedatabasehost"] as? String == "db.example.test:9000")
        #expect(event["location"] as? String == "us-central1")
        #expect(event["time"] as? String == "2025-11-28T15:00:00.123Z")
        #expect((event["time"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(event["datacontenttype"] as? String == "application/json")
        #expect(event["authtype"] as? String == "app_user" && event["authid"] as? String == "ann")
        #expect(events[1]["id"] as? String == "evt-2")
        #expect(events[1]["authtype"] as? String == "admin" && events[1]["authid"] == nil)
        // The stored event's ID and time are the CloudEvent's.
        let stored = try await database.outbox!.pending(for: "onPost", after: 0, limit: 10)
        #expect(stored.map(\.event.id) == ["evt-1", "evt-2"])
        #expect(stored.allSatisfy { $0.event.time == Self.clock })
        #expect(try CloudEvent(structured: Self.envelope.structured(stored[0].event)).time == Self.clock)
    }

    // MARK: - data and delta

    /// Firebase's SDKs rebuild the value after: objects merge key by key, null removes a key,
    /// anything else (a leaf, an array, null) replaces.
    static func applyDelta(_ base: Any, _ delta: Any) -> Any {
        guard let change = delta as? [String: Any], let source = base as? [String: Any] else { return delta }
        var merged = source
        for (key, value) in change {
            if value is NSNull {
                merged[key] = nil
            } else {
                merged[key] = applyDelta(source[key] ?? NSNull(), value)
            }
        }
        return merged.isEmpty ? NSNull() : merged
    }

    struct DeltaCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// The value at `/doc` before.
        var before: String
        /// The write, below `/doc`: a relative location and its JSON.
        var location: String
        var value: String
        /// The `delta` expected, as JSON.
        var delta: String
        var testDescription: String { name }
    }

    static let deltaCases: [DeltaCase] = [
        DeltaCase(name: "a leaf in a nested object changes", before: #"{"a": {"x": 1, "y": 2}, "b": "keep"}"#,
                  location: "a/x", value: "5", delta: #"{"a": {"x": 5}}"#),
        DeltaCase(name: "a nested key is deleted", before: #"{"a": {"x": 1, "y": {"z": true}}, "b": "keep"}"#,
                  location: "a/y/z", value: "null", delta: #"{"a": {"y": null}}"#),
        DeltaCase(name: "a whole branch is deleted", before: #"{"a": {"x": 1}, "b": "keep"}"#,
                  location: "a", value: "null", delta: #"{"a": null}"#),
        DeltaCase(name: "a key is added", before: #"{"a": 1}"#, location: "b", value: #"{"c": "d"}"#, delta: #"{"b": {"c": "d"}}"#),
        DeltaCase(name: "an array element changes", before: #"{"list": ["a", "b", "c"], "n": 1}"#,
                  location: "list/1", value: #""z""#, delta: #"{"list": ["a", "z", "c"]}"#),
        DeltaCase(name: "an array loses an element", before: #"{"list": ["a", "b", "c"]}"#,
                  location: "list/2", value: "null", delta: #"{"list": ["a", "b"]}"#),
        DeltaCase(name: "an array becomes an object", before: #"{"list": ["a", "b"]}"#,
                  location: "list/x", value: "1", delta: #"{"list": {"0": "a", "1": "b", "x": 1}}"#),
        DeltaCase(name: "an object becomes an array", before: #"{"m": {"0": "a", "x": 1}}"#,
                  location: "m", value: #"{"0": "a", "1": "b"}"#, delta: #"{"m": ["a", "b"]}"#),
        DeltaCase(name: "the top becomes an array", before: #"{"k": 1}"#,
                  location: "", value: #"["p", "q"]"#, delta: #"["p", "q"]"#),
        DeltaCase(name: "an object replaces a leaf", before: #"{"a": 1}"#, location: "a", value: #"{"b": 2}"#, delta: #"{"a": {"b": 2}}"#),
        DeltaCase(name: "a leaf replaces an object", before: #"{"a": {"b": 2}, "c": 3}"#, location: "a", value: "7", delta: #"{"a": 7}"#),
        DeltaCase(name: "a set replaces several keys", before: #"{"a": 1, "b": 2, "c": 3}"#,
                  location: "", value: #"{"a": 1, "b": 20, "d": 4}"#, delta: #"{"b": 20, "c": null, "d": 4}"#),
        DeltaCase(name: "priorities are left out", before: #"{"a": {".value": 1, ".priority": 3}, "b": {"c": 2, ".priority": "p"}}"#,
                  location: "b/c", value: #"{".value": 5, ".priority": 9}"#, delta: #"{"b": {"c": 5}}"#),
        DeltaCase(name: "the value is created", before: "null", location: "", value: #"{"a": [1, 2]}"#, delta: #"{"a": [1, 2]}"#),
        DeltaCase(name: "the value is deleted", before: #"{"a": {"b": 1}}"#, location: "", value: "null", delta: "null"),
    ]

    @Test(arguments: deltaCases)
    func deltaMergedIntoDataGivesTheValueAfter(_ example: DeltaCase) async throws {
        let fixture = try Fixture([("onDoc", .written, "doc", nil)])
        defer { fixture.close() }
        let database = try fixture.open()
        if example.before != "null" { try await Self.set(database, "/doc", example.before) }
        let beforeJSON = JSONWriter.string(database.current.state.value(at: try Path(parsing: "/doc")))
        try await Self.set(database, "/doc/\(example.location)", example.value)
        let afterJSON = JSONWriter.string(database.current.state.value(at: try Path(parsing: "/doc")))

        let events = try await Self.events(for: "onDoc", in: database)
        let last = try #require(events.last)
        let data = try #require(last["data"] as? [String: Any])
        let dataText = try canonicalJSON(data)
        #expect(!dataText.contains("priority"), "\(dataText)")
        #expect(try canonicalJSON(try #require(data["data"])) == canonicalJSON(text: beforeJSON))
        let delta = try #require(data["delta"])
        #expect(try canonicalJSON(delta) == canonicalJSON(text: example.delta))
        let rebuilt = Self.applyDelta(data["data"] ?? NSNull(), delta)
        #expect(try canonicalJSON(rebuilt) == canonicalJSON(text: afterJSON))
    }

    @Test func aDeleteHasTheValueBeforeAndANullDeltaAndIsTypedDeleted() async throws {
        let fixture = try Fixture([("onGone", .deleted, "items/{id}", nil)])
        defer { fixture.close() }
        let database = try fixture.open()
        try await Self.set(database, "/items", #"{"i1": {"name": "x", "tags": ["a", "b"]}, "i2": 2}"#)
        try await Self.set(database, "/items", #"{"i2": 2}"#)
        let events = try await Self.events(for: "onGone", in: database)
        try #require(events.count == 1)
        #expect(events[0]["type"] as? String == "google.firebase.database.ref.v1.deleted")
        #expect(events[0]["ref"] as? String == "items/i1")
        let data = try #require(events[0]["data"] as? [String: Any])
        #expect(data["delta"] is NSNull)
        #expect(try canonicalJSON(try #require(data["data"])) == canonicalJSON(text: #"{"name": "x", "tags": ["a", "b"]}"#))
    }

    // MARK: - The backlog's bound

    @Test func pastTheBacklogLimitEventsAreDroppedAndCountedAndTheWarningComesOnce() async throws {
        let warnings = Collected<(EventBacklog.Queue, Int)>()
        let backlog = EventBacklog(limit: 2) { queue, waiting in warnings.append((queue, waiting)) }
        let fixture = try Fixture([("bounded", .written, "n", nil), ("roomy", .written, "m", nil)], backlog: backlog)
        defer { fixture.close() }
        let database = try fixture.open()
        for value in 1...3 { try await Self.set(database, "/n", "\(value)") }
        try await Self.set(database, "/m", "1")

        let queue = EventBacklog.Queue(source: "database/test", function: "bounded")
        let stored = try await database.outbox!.pending(for: "bounded", after: 0, limit: 10)
        #expect(stored.count == 2)
        var kept: [String] = []
        for event in stored {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.envelope.structured(event.event))) as? [String: Any])
            kept.append(try canonicalJSON(try #require(object["data"])))
        }
        #expect(kept == [try canonicalJSON(text: #"{"data": null, "delta": 1}"#), try canonicalJSON(text: #"{"data": 1, "delta": 2}"#)])
        #expect(backlog.dropped == [queue: 1])
        #expect(backlog.waiting[queue] == 2)
        #expect(backlog.limit == 2 && backlog.warningAt == 2)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first.map { $0.0 == queue && $0.1 == 2 } == true)
        // Another function's queue is its own.
        #expect(try await database.outbox!.waiting(for: "roomy") == 1)
    }

    @Test func functionsSharingAnEventAreBoundedEachOnItsOwnQueue() async throws {
        let warnings = Collected<(EventBacklog.Queue, Int)>()
        let backlog = EventBacklog(limit: 2) { queue, waiting in warnings.append((queue, waiting)) }
        let fixture = try Fixture([("first", .written, "n", nil), ("second", .written, "n", nil)], backlog: backlog)
        defer { fixture.close() }
        let database = try fixture.open()
        for value in 1...3 { try await Self.set(database, "/n", "\(value)") }

        let queues = ["first", "second"].map { EventBacklog.Queue(source: "database/test", function: $0) }
        for (function, queue) in zip(["first", "second"], queues) {
            let stored = try await database.outbox!.pending(for: function, after: 0, limit: 10)
            #expect(stored.map(\.event.id) == ["evt-1", "evt-2"])
            #expect(backlog.dropped[queue] == 1 && backlog.waiting[queue] == 2)
        }
        #expect(Set(warnings.all.map(\.0)) == Set(queues))
        #expect(warnings.all.allSatisfy { $0.1 == 2 })
    }

    @Test func theWarningComesWhenCrossingFourFifthsOfTheLimit() async throws {
        let warnings = Collected<Int>()
        let backlog = EventBacklog(limit: 10) { _, waiting in warnings.append(waiting) }
        let fixture = try Fixture([("fn", .written, "n", nil)], backlog: backlog)
        defer { fixture.close() }
        let database = try fixture.open()
        for value in 1...7 { try await Self.set(database, "/n", "\(value)") }
        #expect(warnings.all.isEmpty)
        try await Self.set(database, "/n", "8")
        #expect(warnings.all == [8])
        for value in 9...12 { try await Self.set(database, "/n", "\(value)") }
        #expect(warnings.all == [8])
        #expect(backlog.dropped[EventBacklog.Queue(source: "database/test", function: "fn")] == 2)
        #expect(try await database.outbox!.waiting(for: "fn") == 10)
    }

    @Test func withoutSubscriptionsNothingIsRecorded() async throws {
        let fixture = try Fixture([])
        defer { fixture.close() }
        let database = try fixture.open()
        try await Self.set(database, "/a", "1")
        #expect(try await database.outbox!.backlog().isEmpty)
        fixture.recorder.setSubscriptions([
            .init(function: "late", trigger: try DatabaseTrigger(eventType: DatabaseTrigger.Change.written.eventType, ref: "a", instance: nil, function: "late")),
        ])
        try await Self.set(database, "/a", "2")
        #expect(try await database.outbox!.backlog() == ["late": 1])
    }
}
