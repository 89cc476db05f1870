import Foundation
import HearthServer
import HearthTesting
import Testing

/// Slowloris and idle connections against a real server with short timeouts: a client that
/// trickles a head, stalls a body or idles between requests is cut off, while event streams
/// and WebSockets, which hold a connection open on purpose, are not.
///
/// Each wait ends on the server closing the connection (a read returning the end) or, were no
/// timeout at work, at ``TestSocket/limit``. The only timing checked is that the server did not
/// close too early, measured from a moment before its clock can have started: how late it
/// closes depends on how busy the machine is.
@Suite("Slow clients")
struct SlowClientTests {
    static let header = Duration.milliseconds(800)
    static let body = Duration.milliseconds(800)
    static let idle = Duration.milliseconds(1200)

    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.connectionLimits.headerTimeout = header
        configuration.connectionLimits.bodyTimeout = body
        configuration.connectionLimits.idleTimeout = idle
    }

    /// A GET of `path` with `headers` (whole lines), keeping the connection alive.
    static func request(_ path: String, headers: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n"
    }

    @Test func aConnectionThatSendsNothingIsClosedAtTheHeaderTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let started = ContinuousClock.now
            let socket = try TestSocket(port: server.port)
            let (text, closed) = await socket.readUntilClosed()
            let elapsed = ContinuousClock.now - started
            #expect(closed && text.isEmpty)
            #expect(elapsed >= Self.header, "\(elapsed)")
        }
    }

    @Test func aTricklingHeadIsClosedAtTheHeaderTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let started = ContinuousClock.now
            let socket = try TestSocket(port: server.port)
            try socket.write("GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            // A header line every 100 ms, for far longer than the timeout: progress that
            // must not count. (The trickle ends at the first send after the close.)
            let trickle = Task { try await socket.trickle((0..<100).map { "X-Slow-\($0): 1\r\n" }, every: .milliseconds(100)) }
            let (text, closed) = await socket.readUntilClosed()
            _ = await trickle.result
            let elapsed = ContinuousClock.now - started
            #expect(closed, "the server kept a trickling head open")
            #expect(text.isEmpty, "no response to a head that never ended: \(text)")
            #expect(elapsed >= Self.header, "\(elapsed)")
        }
    }

    @Test func aTricklingHeadOnAKeptAliveConnectionIsClosedToo() async throws {
        try await withServer(configure: Self.configure) { server in
            let socket = try TestSocket(port: server.port)
            try socket.write(Self.request("/a.json"))
            #expect(await socket.read(untilContaining: "\r\n\r\nnull").hasPrefix("HTTP/1.1 200"))
            try socket.write("GET /a.json HTTP/1.1\r\n")
            let trickle = Task { try await socket.trickle((0..<100).map { "X-Slow-\($0): 1\r\n" }, every: .milliseconds(100)) }
            let (_, closed) = await socket.readUntilClosed()
            _ = await trickle.result
            #expect(closed)
        }
    }

    @Test func aStalledBodyIsClosedAtTheBodyTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let socket = try TestSocket(port: server.port)
            let started = ContinuousClock.now
            try socket.write("PUT /stalled.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n\"12345")
            let (text, closed) = await socket.readUntilClosed()
            let elapsed = ContinuousClock.now - started
            #expect(closed)
            #expect(!text.contains("200 OK"), "\(text)")
            #expect(elapsed >= Self.body, "\(elapsed)")
            #expect(try await server.read("/stalled.json") == "null", "nothing half-sent was stored")
        }
    }

    @Test func aBodyThatKeepsComingIsNotCutOff() async throws {
        try await withServer(configure: {
            Self.configure(&$0)
            $0.connectionLimits.bodyTimeout = .milliseconds(1500)
        }) { server in
            let socket = try TestSocket(port: server.port)
            let value = "\"" + String(repeating: "a", count: 38) + "\""
            try socket.write("PUT /slow.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(value.utf8.count)\r\n\r\n")
            // A byte every 100 ms: 4 s in all, far past the body timeout, each gap well within it.
            try await socket.trickle(value.map(String.init), every: .milliseconds(100))
            let answer = await socket.read(untilContaining: value)
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        }
    }

    @Test func anIdleKeptAliveConnectionIsClosedAtTheIdleTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let socket = try TestSocket(port: server.port)
            let asked = ContinuousClock.now  // before the response ends, when the idle clock starts
            try socket.write(Self.request("/a.json"))
            #expect(await socket.read(untilContaining: "\r\n\r\nnull").hasPrefix("HTTP/1.1 200"))
            let (_, closed) = await socket.readUntilClosed()
            let elapsed = ContinuousClock.now - asked
            #expect(closed)
            #expect(elapsed >= Self.idle, "\(elapsed)")
        }
    }

    /// A realtime WebSocket to `server`. The server's 800 ms header timeout is what these tests
    /// set it to, and a machine busy with the whole suite can take longer to send the upgrade
    /// request: a try the server cut off that way is tried again (what is tested is what
    /// happens once it is open).
    static func openedWebSocket(_ server: TestServer) async throws -> RealtimeTestClient {
        for _ in 1..<5 {
            if let client = try? await RealtimeTestClient.connect(server) { return client }
        }
        return try await RealtimeTestClient.connect(server)
    }

    /// A connection that idles beside a long-lived one: once the server has closed it, the
    /// idle timeout has passed for the other as well.
    static func waitOutTheIdleTimeout(_ server: TestServer) async throws {
        let idler = try TestSocket(port: server.port)
        try idler.write(request("/a.json"))
        _ = await idler.read(untilContaining: "\r\n\r\nnull")
        let (_, closed) = await idler.readUntilClosed()
        #expect(closed, "the idle connection beside it was not closed")
    }

    @Test func anEventStreamStaysOpenPastTheIdleTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let stream = try TestSocket(port: server.port)
            try stream.write(Self.request("/feed.json", headers: "Accept: text/event-stream\r\n"))
            #expect(await stream.read(untilContaining: "event: put").contains("text/event-stream"))
            try await Self.waitOutTheIdleTimeout(server)
            try await server.expectOK("PUT", "/feed.json", body: #""still here""#)
            #expect(await stream.read(untilContaining: "still here").contains("still here"), "the stream was cut off")
        }
    }

    @Test func aWebSocketStaysOpenPastTheIdleTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let client = try await Self.openedWebSocket(server)
            _ = try await client.request("p", #"{"p": "/ws/a", "d": 1}"#)
            try await Self.waitOutTheIdleTimeout(server)
            let response = try await client.request("p", #"{"p": "/ws/a", "d": 2}"#)
            #expect(response.status == "ok", "the socket was cut off")
            try await client.close()
        }
    }

    @Test func aHeldLongPollStaysOpenPastTheIdleTimeout() async throws {
        try await withServer(configure: Self.configure) { server in
            let start = try await server.request("GET", "/.lp?start=t&ser=1&cb=7&v=5&ns=default")
            let match = try #require(start.text.firstMatch(of: /pLPCommand\('start','(\w+)','(\w+)'\)/))
            let credentials = "id=\(match.1)&pw=\(match.2)&ns=default"
            // A listen, carried by a poll that its answer releases.
            let listen = LogRedactionTests.webSafeBase64(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/lp","h":""}}}"#)
            let listened = try await server.request("GET", "/.lp?\(credentials)&ser=2&seg0=0&ts0=1&d0=\(listen)")
            #expect(listened.text.contains(#""s":"ok""#), "\(listened.text)")
            // A poll with nothing to answer yet: the server holds it (up to 20 s).
            let held = try TestSocket(port: server.port)
            try held.write(Self.request("/.lp?\(credentials)&ser=3"))
            try await Self.waitOutTheIdleTimeout(server)
            // A change to the listened path is its answer, on a connection still open.
            try await server.expectOK("PUT", "/lp.json", body: #""news""#)
            let answer = await held.read(untilContaining: "news")
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("news"), "the held poll was cut off: \(answer)")
        }
    }
}
