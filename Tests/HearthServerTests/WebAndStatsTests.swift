import Foundation
import HearthServer
import HearthTesting
import Testing

/// The web front end's files, Firebase Hosting's `init.json`, and the admins' server figures,
/// on a real server over HTTP.
@Suite("Web files and server figures")
struct WebAndStatsTests {
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    /// A server whose web root is a fresh folder holding `files` (relative path → text).
    static func withWebRoot(_ files: [String: String], _ body: (TestServer) async throws -> Void) async throws {
        let root = try TemporaryDirectory(prefix: "hearth-web")
        defer { root.remove() }
        for (path, text) in files {
            let url = root.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try await TestServer.with(configure: { $0.webRoot = root.url }, body)
    }

    @Test func pagesAndModulesAreServedWithTypesAndRevalidation() async throws {
        try await Self.withWebRoot([
            "index.html": "<!doctype html><title>app</title>",
            "app/main.js": "export const x = 1;",
            "console/index.html": "<!doctype html><title>console</title>",
        ]) { server in
            let page = try await server.request("GET", "/")
            #expect(page.status == 200)
            #expect(page.text.contains("<title>app</title>"))
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("Cache-Control") == "no-cache")

            let module = try await server.request("GET", "/app/main.js")
            #expect(module.status == 200)
            #expect(module.header("Content-Type")?.contains("javascript") == true)
            let etag = try #require(module.header("ETag"))
            let again = try await server.request("GET", "/app/main.js", headers: ["If-None-Match": etag])
            #expect(again.status == 304)

            let console = try await server.request("GET", "/console/")
            #expect(console.text.contains("<title>console</title>"))
        }
    }

    @Test func missingFilesAndEscapesGetFirebasesNotFound() async throws {
        try await Self.withWebRoot(["index.html": "app"]) { server in
            for path in ["/nothing-here", "/app/missing.js", "/%2e%2e/%2e%2e/etc/passwd"] {
                let result = try await server.request("GET", path)
                #expect([400, 404].contains(result.status), "\(path): \(result.status)")
                #expect((result.json as? [String: String])?["error"] != nil, "\(path): \(result.text)")
                #expect(!result.text.contains("root:"))
            }
            // Writes to a page path are not file uploads: they reach the database, which wants `.json`.
            let put = try await server.request("PUT", "/index.html", body: "\"x\"")
            #expect(put.status == 404)
            #expect(try await server.request("GET", "/").text == "app")
        }
    }

    @Test func databasePathsStillAnswerAsTheDatabase() async throws {
        try await Self.withWebRoot(["index.json": "not me"]) { server in
            _ = try await server.request("PUT", "/index.json", body: #""from the database""#, headers: Self.admin)
            let read = try await server.request("GET", "/index.json")
            #expect(read.text == #""from the database""#)
        }
    }

    @Test func hostingConfigNamesTheProjectAndBucket() async throws {
        try await TestServer.with(configure: { $0.projectID = "demo-app" }) { server in
            let result = try await server.request("GET", "/__/firebase/init.json")
            #expect(result.status == 200)
            let config = try #require(result.json as? [String: String])
            #expect(config["projectId"] == "demo-app")
            #expect(config["storageBucket"] == "demo-app.appspot.com")
        }
    }

    @Test func statsAreForAdminsAndCountWritesAndStreams() async throws {
        try await TestServer.with { server in
            let denied = try await server.request("GET", "/.hearth/stats")
            #expect(denied.status == 401)
            #expect(denied.text.contains("Permission denied"))
            #expect(try await server.request("GET", "/.hearth/stats", headers: ["Authorization": "Bearer wrong"]).status == 401)

            for index in 0..<3 {
                _ = try await server.request("PUT", "/counted/\(index).json", body: "\(index)")
            }
            let stream = try RawHTTPConnection(
                port: server.port, request: "GET /counted.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            #expect(await stream.read(untilContaining: "event: put").contains("event: put"))

            let result = try await server.request("GET", "/.hearth/stats", headers: Self.admin)
            #expect(result.status == 200)
            let figures = try #require(result.json as? [String: Any])
            #expect((figures["connections"] as? [String: Int])?["streams"] == 1)
            #expect((figures["memoryBytes"] as? Int ?? 0) > 1_000_000)
            #expect((figures["uptimeSeconds"] as? Double ?? -1) >= 0)
            let databases = try #require(figures["databases"] as? [[String: Any]])
            let main = try #require(databases.first { $0["name"] as? String == "default" })
            #expect(main["writes"] as? Int == 3)
            #expect(main["streams"] as? Int == 1)
            #expect(main["open"] as? Bool == true)

            let post = try await server.request("POST", "/.hearth/stats", body: "{}", headers: Self.admin)
            #expect(post.status == 400)
            stream.disconnect()
        }
    }

    @Test func aStreamEndsWhenItsClientGoesAwayNotAtTheNextKeepAlive() async throws {
        try await TestServer.with { server in
            let stream = try RawHTTPConnection(
                port: server.port, request: "GET /gone.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            #expect(await stream.read(untilContaining: "event: put").contains("event: put"))
            #expect(try await Self.openStreams(server) == 1)
            stream.disconnect()
            // Keep-alives come every 30 s here; the count must drop long before that.
            let deadline = ContinuousClock.now + .seconds(5)
            var open = 1
            while open > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                open = try await Self.openStreams(server)
            }
            #expect(open == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aGracefulShutdownEndsOpenStreams() async throws {
        let server = try await TestServer.start()
        let stream = try RawHTTPConnection(
            port: server.port, request: "GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        #expect(await stream.read(untilContaining: "event: put").contains("event: put"))
        // The server stops only once every stream has ended; the stream sees its chunked end.
        await server.stop()
        #expect(await stream.read(untilContaining: "0\r\n\r\n").hasSuffix("0\r\n\r\n"))
        stream.disconnect()
    }

    static func openStreams(_ server: TestServer) async throws -> Int {
        let result = try await server.request("GET", "/.hearth/stats", headers: admin)
        return try #require(((result.json as? [String: Any])?["connections"] as? [String: Int])?["streams"])
    }
}
