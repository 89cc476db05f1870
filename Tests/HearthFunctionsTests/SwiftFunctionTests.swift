import AsyncHTTPClient
import Foundation
import HearthCore
import HearthFunctions
import HearthOutbox
import HearthServer
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing

/// Functions written in Swift and run in the server's process (Hearth embedded as a library):
/// the same database triggers, parameters, values before and after and writers as any other
/// runtime, writes back through the databases, and failures retried.
struct SwiftFunctionTests {
    /// Collects what the functions saw and wakes the test at each event.
    final class Seen: Sendable {
        let events = Mutex<[DatabaseChangeEvent]>([])
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)

        func add(_ event: DatabaseChangeEvent) {
            events.withLock { $0.append(event) }
            continuation.yield()
        }

        func wait(for count: Int) async -> [DatabaseChangeEvent] {
            var iterator = stream.makeAsyncIterator()
            while events.withLock({ $0.count }) < count { _ = await iterator.next() }
            return events.withLock { $0 }
        }
    }

    static func service(
        _ functions: [FunctionDefinition], observe: @escaping @Sendable (DeliveryLane.Attempt) -> Void = { _ in }
    ) throws -> FunctionsService {
        var logger = Logger(label: "swift-functions-test")
        logger.logLevel = .critical
        return try FunctionsService(
            functions: functions, naming: .init(databaseHost: "127.0.0.1"), backlog: EventBacklog(limit: 1000),
            environment: DeliveryLane.Environment(
                now: { Int64(Date().timeIntervalSince1970 * 1000) }, sleep: { _ in await Task.yield() }, observe: observe,
                logger: logger))
    }

    @Test func aSwiftFunctionGetsTheChangeAndWritesBackAsAdmin() async throws {
        let seen = Seen()
        let folder = Mutex<DataFolder?>(nil)
        let copy = try FunctionDefinition.onValue(.written, ref: "posts/{postId}", name: "copyPost") { event in
            // Writes back through the database itself: admin, recorded, streamed to listeners.
            let database = try folder.withLock { $0 }!.database(named: event.instance)
            try await database.write(.set(Path(parsing: "copies/\(event.parameters["postId"]!)"), event.after), origin: .admin)
            seen.add(event)
        }
        try await TestServer.with(functions: try Self.service([copy])) { server in
            folder.withLock { $0 = server.folder }
            let database = try server.folder.database(named: "default")
            try await database.write(.set(try Path(parsing: "posts/p1"), .string("hi")), origin: .user("ann"))
            _ = await seen.wait(for: 1)
            #expect(database.current.state.value(at: try Path(parsing: "copies/p1")) == .string("hi"))
            try await database.write(.set(try Path(parsing: "posts/p1"), .null), origin: .unauthenticated)
            let events = await seen.wait(for: 2)
            #expect(events.map(\.change) == [.written, .written])
            #expect(events.map(\.path.description) == ["/posts/p1", "/posts/p1"])
            #expect(events[0].parameters == ["postId": "p1"] && events[0].instance == "default")
            #expect(events[0].before == .null && events[0].after == .string("hi"))
            #expect(events[1].before == .string("hi") && events[1].after == .null)
            #expect((events[0].authType, events[0].authID) == ("app_user", "ann"))
            #expect(events[1].authType == "unauthenticated" && events[1].authID == nil)
            #expect(events[0].id != events[1].id)
            // The second event's run deleted the copy again.
            #expect(database.current.state.value(at: try Path(parsing: "copies")) == .null)
        }
    }

    @Test func aThrowingSwiftFunctionIsRetriedThenTheEventIsDeadLettered() async throws {
        let attempts = Mutex(0)
        let flaky = try FunctionDefinition.onValue(
            .created, ref: "jobs/{id}", name: "flaky", policy: DeliveryPolicy(maxAttempts: 3, minBackoff: .milliseconds(1))
        ) { event in
            attempts.withLock { $0 += 1 }
            if event.after == .string("never") { throw CancellationError() }
        }
        // Told when the flaky function has taken "fine", which comes after the given-up "never".
        let (done, finished) = AsyncStream.makeStream(of: Void.self)
        let observe: @Sendable (DeliveryLane.Attempt) -> Void = { attempt in
            if attempt.function == "flaky", attempt.result == .delivered { finished.yield() }
        }
        try await TestServer.with(functions: try Self.service([flaky], observe: observe)) { server in
            let database = try server.folder.database(named: "default")
            try await database.write(.set(try Path(parsing: "jobs/a"), .string("never")))
            try await database.write(.set(try Path(parsing: "jobs/b"), .string("fine")))
            var iterator = done.makeAsyncIterator()
            _ = await iterator.next()
            let outbox = try #require(database.outbox)
            let dead = try await outbox.deadLetters(for: "flaky", limit: 10)
            // Its three failed tries, the last (which gave up) included.
            #expect(dead.count == 1 && dead[0].attempts == 3)
            #expect(attempts.withLock { $0 } == 4)  // three tries of "never", one of "fine"
        }
    }

    @Test(.timeLimit(.minutes(10))) func theConsolesListingsSayWhereEachFunctionRunsAndHowOftenADeadLetterWasTried() async throws {
        let failing = try FunctionDefinition.onValue(
            .written, ref: "posts/{postId}", name: "copyPost", policy: DeliveryPolicy(maxAttempts: 2, minBackoff: .milliseconds(1))
        ) { _ in throw CancellationError() }
        var webhook = try FunctionDefinition.onValue(.created, ref: "items/{id}", name: "notify") { _ in }
        webhook.invoker = HTTPEventInvoker(url: "http://127.0.0.1:9/hook", signer: nil, client: .shared, now: { 0 })
        try await TestServer.with(functions: try Self.service([failing, webhook])) { server in
            func get(_ path: String) async throws -> [String: Any] {
                let result = try await server.request("GET", path, headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
                #expect(result.status == 200)
                return try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any])
            }
            let functions = try #require(try await get("/.hearth/functions")["functions"] as? [[String: Any]])
            #expect(functions.map { $0["name"] as? String } == ["copyPost", "notify"])
            #expect(functions.map { $0["runsIn"] as? String } == ["server", "webhook"])
            #expect(functions.allSatisfy { $0["process"] == nil })

            let database = try server.folder.database(named: "default")
            try await database.write(.set(try Path(parsing: "posts/p1"), .string("hi")))
            // The event is dead-lettered just after its last attempt is reported: the list is read until it shows.
            var letters: [[String: Any]] = []
            while letters.isEmpty {
                try await Task.sleep(for: .milliseconds(10))
                letters = try #require(try await get("/.hearth/functions/dead-letters")["deadLetters"] as? [[String: Any]])
            }
            // Tried twice: every failure counts, the one that gave up included.
            #expect(letters.map { $0["attempts"] as? Int } == [2])
        }
    }
}

/// HTTPS functions' bodies are held within the server's buffered-body budget, shared with REST
/// writes: a call that would pass it is refused with 503 before the function is called, and the
/// budget is given back after each call.
struct FunctionBodyBudgetTests {
    @Test(.timeLimit(.minutes(10))) func aCallBeyondTheBudgetIsRefusedAndTheBudgetComesBack() async throws {
        // The "function" is another Hearth server's REST root: a JSON POST there answers 200.
        try await TestServer.with { target in
            let client = HTTPClient(configuration: .functions)
            do {
                try await Self.call(target, through: client)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    static func call(_ target: TestServer, through client: HTTPClient) async throws {
        let echo = HTTPFunction(
            name: "echo", region: "us-central1", isCallable: false, url: "http://127.0.0.1:\(target.port)/", timeout: .seconds(30))
        let functions = try FunctionsService(
            functions: [], httpFunctions: [echo], naming: .init(databaseHost: "127.0.0.1"), backlog: EventBacklog(limit: 10),
            environment: DeliveryLane.Environment(now: { 0 }, logger: Logger(label: "budget-test")))
        try await TestServer.with(functions: functions, functionsClient: client, configure: { $0.maxBufferedBodyBytes = 64 * 1024 }) { server in
            let path = "/hearth/us-central1/echo/budget.json"
            let json = ["Content-Type": "application/json"]
            let large = Data("\"\(String(repeating: "x", count: 100 * 1024))\"".utf8)
            let refused = try await server.request("POST", path, data: large, headers: json)
            #expect(refused.status == 503)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("UNAVAILABLE"))
            #expect(try await target.request("GET", "/budget.json?auth=\(TestServer.adminToken)").body == Data("null".utf8))
            // Within the budget, again and again: what each call held was given back.
            for _ in 0..<3 {
                let small = Data("\"\(String(repeating: "y", count: 40 * 1024))\"".utf8)
                #expect(try await server.request("POST", path, data: small, headers: json).status == 200)
            }
        }
    }
}

/// A Swift handler that ignores cancellation cannot hold its lane past the timeout.
struct SwiftFunctionTimeoutTests {
    @Test(.timeLimit(.minutes(10))) func aStuckHandlerFailsAtTheTimeout() async throws {
        let invoker = SwiftFunctionInvoker { _ in
            let (stream, _) = AsyncStream.makeStream(of: Void.self)
            for await _ in stream {}
        }
        let event = CloudEvent(id: "e1", source: "s", type: "t", subject: nil, time: 0, data: Array("null".utf8))
        let stored = StoredEvent(sequence: 1, event: OutboxEvent(subscriber: "fn", id: "e1", body: event.structured(), time: 0), attempts: 0)
        let result = await invoker.deliver(stored, timeout: .milliseconds(50))
        #expect(result == .failed("no answer within 0.05 seconds"))
    }
}
