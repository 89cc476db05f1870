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
        try await TestServer.with(configure: { $0.webFiles = WebFiles(folder: root.url) }, body)
    }

    /// A server whose web files are `files` (relative path → text) held in memory, as the
    /// copy compiled into `hearth` is.
    static func withWebFiles(_ files: [String: String], _ body: (TestServer) async throws -> Void) async throws {
        let table = files.mapValues { Array($0.utf8) }
        try await TestServer.with(configure: { $0.webFiles = WebFiles(files: table) }, body)
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

    @Test func filesInMemoryAreServedAsAFolderServesThem() async throws {
        try await Self.withWebFiles([
            "index.html": "<!doctype html><title>app</title>",
            "app/main.js": "export const x = 1;",
            "console/index.html": "<!doctype html><title>console</title>",
            "__/auth/index.html": "<!doctype html><title>auth</title>",
        ]) { server in
            let page = try await server.request("GET", "/")
            #expect(page.status == 200)
            #expect(page.text == "<!doctype html><title>app</title>")
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("Cache-Control") == "no-cache")

            // The ETag is the first 128 bits of the file's SHA-256: `printf %s … | sha256sum`.
            let module = try await server.request("GET", "/app/main.js")
            #expect(module.text == "export const x = 1;")
            #expect(module.header("Content-Type")?.contains("javascript") == true)
            let etag = try #require(module.header("ETag"))
            #expect(etag == #""2bf28849cade87113ec4170ef2bf9ffb""#)
            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                #expect(try await server.request("GET", "/app/main.js", headers: ["If-None-Match": condition]).status == 304, "\(condition)")
            }
            #expect(try await server.request("GET", "/app/main.js", headers: ["If-None-Match": "\"other\""]).status == 200)

            #expect(try await server.request("GET", "/console/").text == "<!doctype html><title>console</title>")
            // A folder without its slash is sent to it, so the page's relative links resolve.
            let bare = try await FilesOriginTests.rawGET(port: server.port, "/console")
            #expect(FilesOriginTests.status(bare) == 301, "\(bare)")
            #expect(FilesOriginTests.header("Location", in: bare) == "/console/")

            // Both of Hosting's auth pages are the one page, with their query kept where it is.
            for path in ["/__/auth/handler?state=x", "/__/auth/action?mode=verifyEmail&oobCode=y"] {
                #expect(try await server.request("GET", path).text == "<!doctype html><title>auth</title>", "\(path)")
            }

            let part = try await server.request("GET", "/app/main.js", headers: ["Range": "bytes=7-11"])
            #expect(part.status == 206)
            #expect(part.text == "const")
            #expect(part.header("Content-Range") == "bytes 7-11/19")
            let stale = try await server.request("GET", "/app/main.js", headers: ["Range": "bytes=7-11", "If-Range": "\"other\""])
            #expect(stale.status == 200)
            #expect(stale.text == "export const x = 1;")
            #expect(try await server.request("GET", "/app/main.js", headers: ["Range": "bytes=50-"]).status == 416)

            let head = try await server.request("HEAD", "/app/main.js")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == "19")
            #expect(head.header("ETag") == etag)

            for path in ["/nothing-here", "/app/missing.js", "/app/", "/%2e%2e/%2e%2e/etc/passwd", "/app/main.js/"] {
                let result = try await server.request("GET", path)
                #expect([400, 404].contains(result.status), "\(path): \(result.status)")
                #expect((result.json as? [String: String])?["error"] != nil, "\(path): \(result.text)")
            }
        }
    }

    @Test func aFolderIsReadAnewSoAnEditShowsOnTheNextLoad() async throws {
        let root = try TemporaryDirectory(prefix: "hearth-web")
        defer { root.remove() }
        let file = root.url.appendingPathComponent("app.js")
        try Data("let a = 1;".utf8).write(to: file)
        try await TestServer.with(configure: { $0.webFiles = WebFiles(folder: root.url) }) { server in
            let first = try await server.request("GET", "/app.js")
            let etag = try #require(first.header("ETag"))
            #expect(try await server.request("GET", "/app.js", headers: ["If-None-Match": etag]).status == 304)
            // Same size, same second: only the bytes tell the versions apart.
            try Data("let b = 1;".utf8).write(to: file)
            let second = try await server.request("GET", "/app.js", headers: ["If-None-Match": etag])
            #expect(second.status == 200)
            #expect(second.text == "let b = 1;")
            #expect(second.header("ETag") != etag)
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

    // A hang detector, wide enough for a loaded two-core run.
    @Test(.timeLimit(.minutes(10)))
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
