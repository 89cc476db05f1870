import Foundation
import HearthCore
import Logging
import HearthServer
import HearthStore
import HearthTesting
import Testing

/// Only an admin (or anyone on an emulator) creates a database by naming it; the databases a
/// server keeps open are bounded, and idle ones close.
@Suite("Database limits")
struct DatabaseLimitsTests {
    static let admin = TestServer.adminHeaders
    static let unknown = "Firebase error. Please ensure that you spelled the name of your Firebase correctly"

    /// A server as `hearth serve` runs it (not an emulator).
    static func withServer(
        clock: TestClock? = nil, _ configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> Void
    ) async throws {
        var options = DatabaseOptions()
        if let clock { options.clock = { clock.now } }
        try await TestServer.with(options: options, configure: { configuration in
            configuration.emulator = false
            if let clock { configuration.clock = { clock.now } }
            configure(&configuration)
        }, body)
    }

    static func folderExists(_ server: TestServer, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: server.folder.url.appendingPathComponent("databases/\(name)").path)
    }

    @Test func anOutsiderCannotCreateADatabaseByNamingIt() async throws {
        try await Self.withServer { server in
            for (path, headers) in [
                ("/.json?ns=stranger1", [String: String]()),
                ("/.json", ["Host": "stranger2.localhost"]),
            ] {
                let answer = try await server.request("GET", path, headers: headers)
                #expect(answer.status == 404, "\(path): \(answer.status) \(answer.text)")
                #expect(answer.errorText == Self.unknown)
            }
            let write = try await server.request("PUT", "/x.json?ns=stranger3", body: "1")
            #expect(write.status == 404)

            // Over the realtime protocol: a shutdown (the SDKs stop reconnecting), then close.
            let socket = try await RealtimeTestClient.connect(server, query: "v=5&ns=stranger4")
            let messages = try await socket.messagesUntilClosed()
            #expect(messages.contains { $0.controlType == "s" && ($0.controlData as? String) == Self.unknown }, "\(messages.map(\.text))")
            // Long-polling: no session.
            let poll = try await server.request("GET", "/.lp?start=t&ser=1&cb=1&v=5&ns=stranger5")
            #expect(!poll.text.contains("pLPCommand('start'"))

            for name in ["stranger1", "stranger2", "stranger3", "stranger4", "stranger5"] {
                #expect(!Self.folderExists(server, name), "\(name) was created")
            }
            #expect(server.folder.openDatabases().keys.allSatisfy { $0 == "default" })
        }
    }

    @Test func anAdminCreatesADatabaseAndOthersThenUseIt() async throws {
        try await Self.withServer { server in
            try await server.expectOK("PUT", "/greeting.json?ns=made", body: #""hi""#, headers: Self.admin)
            #expect(Self.folderExists(server, "made"))
            // Open rules: anyone may use it now, over REST and the realtime protocol.
            #expect(try await server.read("/greeting.json?ns=made") == #""hi""#)
            let socket = try await RealtimeTestClient.open(server, query: "v=5&ns=made")
            #expect(try await socket.request("g", #"{"p":"/greeting"}"#).status == "ok")
            try await socket.close()
        }
    }

    @Test func anEmulatorCreatesDatabasesOnUse() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            #expect(try await server.read("/.json?ns=scratch") == "null")
            #expect(Self.folderExists(server, "scratch"))
        }
    }

    @Test func openDatabasesAreBoundedAndIdleOnesClose() async throws {
        let clock = TestClock()
        try await Self.withServer(clock: clock, { $0.maxOpenDatabases = 3; $0.idleDatabaseTimeout = .seconds(3600) }) { server in
            _ = try await server.read("/.json")
            try await server.expectOK("PUT", "/v.json?ns=one", body: "1", headers: Self.admin)
            try await server.expectOK("PUT", "/v.json?ns=two", body: "2", headers: Self.admin)
            // default, one and two are open and were just used: a fourth is refused, cleanly.
            let refused = try await server.request("GET", "/.json?ns=three", headers: Self.admin)
            #expect(refused.status == 503, "\(refused.text)")
            #expect(!Self.folderExists(server, "three"))

            // A realtime session holds "two" open however long it is idle.
            let socket = try await RealtimeTestClient.open(server, query: "v=5&ns=two")
            clock.advance(by: 2 * 60 * 1000)
            try await server.expectOK("PUT", "/v.json?ns=three", body: "3", headers: Self.admin)
            #expect(server.folder.openDatabases().keys.sorted() == ["default", "three", "two"])
            // "one" was closed; "two" closes once its session is gone and it is idle, and
            // "one" opens again with its data.
            try await socket.close()
            clock.advance(by: 2 * 60 * 1000)
            var reopened = try await server.request("GET", "/v.json?ns=one", headers: Self.admin)
            let deadline = ContinuousClock.now + .seconds(10)
            while reopened.status == 503 && ContinuousClock.now < deadline {
                // The server releases the session's hold once it has seen the socket close.
                try await Task.sleep(for: .milliseconds(20))
                reopened = try await server.request("GET", "/v.json?ns=one", headers: Self.admin)
            }
            #expect(reopened.status == 200)
            #expect(reopened.text == "1")
            #expect(server.folder.openDatabases()["two"] == nil)

            // The reopened database streams and keeps its writes.
            let stream = try RawHTTPConnection(
                port: server.port,
                request: "GET /v.json?ns=one HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
            #expect(await stream.read { $0.contains("\"path\":\"/\"") }.contains("200 OK"))
            try await server.expectOK("PUT", "/v.json?ns=one", body: "11", headers: Self.admin)
            #expect(await stream.read { $0.contains("11") }.contains("\"data\":11"))
            stream.disconnect()
        }
    }

    @Test func theIdleServiceClosesUnusedDatabases() async throws {
        let clock = TestClock()
        try await Self.withServer(clock: clock, { $0.idleDatabaseTimeout = .milliseconds(400) }) { server in
            try await server.expectOK("PUT", "/v.json?ns=brief", body: "1", headers: Self.admin)
            #expect(server.folder.openDatabases()["brief"] != nil)
            clock.advance(by: 1000)
            let deadline = ContinuousClock.now + .seconds(10)
            while server.folder.openDatabases()["brief"] != nil && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(server.folder.openDatabases()["brief"] == nil)
            #expect(try await server.read("/v.json?ns=brief") == "1")
        }
    }

    @Test func aWriteThroughAClosedDatabaseIsRefusedNotLost() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let folder = try DataFolder(url: directory.url, logger: Logger(label: "test"))
            let first = try folder.database(named: "kept")
            try await first.write(.set(try Path(parsing: "/a"), .int(1)))
            #expect(folder.closeIdleDatabases(unusedFor: -1, if: { _ in true }, willClose: { _ in }) == ["kept"])
            await #expect(throws: HearthError.self) { try await first.write(.set(try Path(parsing: "/a"), .int(2))) }
            let second = try folder.database(named: "kept")
            #expect(second !== first)
            #expect(second.value(at: try Path(parsing: "/a")) == .int(1))
        }
    }
}
