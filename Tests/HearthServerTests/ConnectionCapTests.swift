import Foundation
import HearthServer
import HearthTesting
import Testing

/// The caps on connections against a real server: per client address (with the requests a
/// trusted proxy forwards counted by the client's address), and for the server as a whole.
@Suite("Connection caps")
struct ConnectionCapTests {
    static let keepAliveRequest = "GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    /// A connection from `source` that has been answered once (so the server has counted it)
    /// and stays open.
    static func servedConnection(_ server: TestServer, from source: String = "127.0.0.1") async throws -> TestSocket {
        let socket = try TestSocket(port: server.port, from: source)
        try socket.write(keepAliveRequest)
        let answer = await socket.read(untilContaining: "\r\n\r\nnull")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        return socket
    }

    /// A connection answered once and left open, opened again until the server serves it: the
    /// server counts a closed connection out only once it has seen the close, which on a loaded
    /// machine may come after the next connection.
    static func heldConnection(_ server: TestServer) async throws -> TestSocket? {
        for _ in 0..<200 {
            let socket = try TestSocket(port: server.port)
            try? socket.write(keepAliveRequest)
            if await socket.read(untilContaining: "\r\n\r\nnull").hasPrefix("HTTP/1.1 200") { return socket }
        }
        return nil
    }

    /// Opens connections from `source` until one is served, as the server counts out a closed
    /// one only once it has seen the close; each attempt waits for the server's answer.
    static func eventuallyServed(_ server: TestServer, from source: String) async throws -> Bool {
        for _ in 0..<200 {
            let socket = try TestSocket(port: server.port, from: source)
            try? socket.write(keepAliveRequest)
            if await socket.read(untilContaining: "\r\n\r\n").hasPrefix("HTTP/1.1 200") { return true }
        }
        return false
    }

    @Test(.enabled(if: TestSocket.canBind("127.0.0.2"), "needs 127.0.0.2 on loopback (Linux)"))
    func oneAddressGetsItsShareWhileAnotherIsServed() async throws {
        try await withServer(configure: {
            // Loopback peers count as clients here, not as a proxy on this machine.
            $0.trustLoopbackProxies = false
            $0.connectionLimits.maxConnectionsPerAddress = 3
        }) { server in
            var held: [TestSocket] = []
            for _ in 0..<3 { held.append(try await Self.servedConnection(server, from: "127.0.0.2")) }
            let refused = try TestSocket(port: server.port, from: "127.0.0.2")
            let (answer, closed) = await refused.readUntilClosed()
            #expect(closed)
            #expect(answer.hasPrefix("HTTP/1.1 429 Too Many Requests"), "\(answer)")
            // Another address is served as before.
            _ = try await Self.servedConnection(server, from: "127.0.0.3")
            // A connection given back makes room again.
            held.removeLast()
            #expect(try await Self.eventuallyServed(server, from: "127.0.0.2"))
        }
    }

    @Test func pastTheServersCapConnectionsAreAnswered503AndClosed() async throws {
        try await withServer(configure: { $0.connectionLimits.maxConnections = 3 }) { server in
            var held: [TestSocket] = []
            for _ in 0..<3 { held.append(try await Self.servedConnection(server)) }
            let refused = try TestSocket(port: server.port)
            let (answer, closed) = await refused.readUntilClosed()
            #expect(closed)
            #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable"), "\(answer)")
            held.removeAll()
            #expect(try await Self.eventuallyServed(server, from: "127.0.0.1"))
        }
    }

    @Test func aProxyIsNotCappedButEachClientItForwardsForIs() async throws {
        try await withServer(configure: { $0.connectionLimits.maxConnectionsPerAddress = 2 }) { server in
            // The proxy (a loopback peer) holds more connections than one address may.
            var proxyConnections: [TestSocket] = []
            for _ in 0..<4 { proxyConnections.append(try await Self.servedConnection(server)) }

            // Two event streams for one client behind it: its share.
            func stream(for client: String) throws -> TestSocket {
                let socket = try TestSocket(port: server.port)
                try socket.write(
                    "GET /feed.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nX-Forwarded-For: \(client)\r\n\r\n")
                return socket
            }
            var streams: [TestSocket] = []
            for _ in 0..<2 {
                let socket = try stream(for: "203.0.113.5")
                #expect(await socket.read(untilContaining: "event: put").hasPrefix("HTTP/1.1 200"))
                streams.append(socket)
            }
            // A third request for that client is refused, on any connection of the proxy's.
            let third = try stream(for: "203.0.113.5")
            #expect(await third.read(untilContaining: "\r\n\r\n").hasPrefix("HTTP/1.1 429"))
            let upgrade = try TestSocket(port: server.port)
            try upgrade.write(
                "GET /.ws?v=5&ns=default HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-Forwarded-For: 203.0.113.5\r\n\r\n")
            #expect(await upgrade.read(untilContaining: "\r\n\r\n").hasPrefix("HTTP/1.1 429"))
            // Another client behind the same proxy is served.
            let other = try stream(for: "203.0.113.6")
            #expect(await other.read(untilContaining: "event: put").hasPrefix("HTTP/1.1 200"))
            // A stream that ends gives its place back.
            streams.removeLast()
            var servedAgain = false
            for _ in 0..<200 where !servedAgain {
                let again = try TestSocket(port: server.port)
                try again.write("GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.5\r\n\r\n")
                servedAgain = await again.read(untilContaining: "\r\n\r\n").hasPrefix("HTTP/1.1 200")
            }
            #expect(servedAgain)
        }
    }

    @Test func theFilesPortSharesTheServersCapAndTimeouts() async throws {
        try await withServer(configure: {
            $0.filesPort = 0
            $0.connectionLimits.maxConnections = 2
            $0.connectionLimits.headerTimeout = .milliseconds(800)
        }) { server in
            let filesPort = try #require(server.filesPort)
            // One silent connection on the files port is closed at the header timeout.
            let silent = try TestSocket(port: filesPort)
            #expect(await silent.readUntilClosed().closed)
            // Two held on the main port fill the server (once it has counted the silent one
            // out): the files port refuses too.
            let first = try #require(try await Self.heldConnection(server), "the main port never served a connection")
            let second = try #require(try await Self.heldConnection(server), "the main port never served a second connection")
            let held = [first, second]
            let refused = try TestSocket(port: filesPort)
            let (answer, closed) = await refused.readUntilClosed()
            #expect(closed && answer.hasPrefix("HTTP/1.1 503"), "\(answer)")
            _ = held
        }
    }
}
