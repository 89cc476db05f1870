import Foundation
import HearthEngine
import HearthServer
import HearthTesting
import Testing

/// What an outsider can make the server hold in memory: a write the path alone refuses is
/// refused before its body is read, non-admin bodies share a bounded budget, and a
/// long-polling client that withholds a segment cannot pile up the ones after it.
@Suite("Request memory")
struct RequestMemoryTests {
    static let admin = TestServer.adminHeaders
    static let denied = "Permission denied"

    static let rules = """
        {"rules": {
          "public": {".read": true, ".write": true},
          "mine": {"$uid": {".write": "auth !== null && auth.uid === $uid"}},
          "checked": {".write": "newData.isString()"}
        }}
        """

    /// A request whose headers promise `length` bytes of body, of which none are sent.
    static func promise(_ server: TestServer, _ method: String, _ path: String, length: Int, headers: String = "") throws -> RawHTTPConnection {
        try RawHTTPConnection(
            port: server.port,
            request: "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(length)\r\n\(headers)\r\n")
    }

    @Test func aWriteThePathRefusesIsAnsweredBeforeItsBody() async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.rules }) { server in
            // 200 MB promised, nothing sent: the answer comes at once.
            for (method, path) in [("PUT", "/.json"), ("PUT", "/mine/alice.json"), ("POST", "/other.json"), ("PATCH", "/mine/alice.json"), ("PUT", "/other.json")] {
                let connection = try Self.promise(server, method, path, length: 200 << 20)
                let answer = await connection.read { $0.contains("\r\n\r\n") && $0.contains("}") }
                #expect(answer.hasPrefix("HTTP/1.1 401"), "\(method) \(path): \(answer.prefix(200))")
                #expect(answer.contains(Self.denied))
            }
            // A rule that reads the new data, or one that admits the writer, reads the body; so
            // does a push where the new child's own rule (naming it) may grant it.
            try await server.expectOK("PUT", "/checked.json", body: #""ok""#)
            let wrongType = try await server.request("PUT", "/checked.json", body: "1")
            #expect(wrongType.status == 401)
            try await server.expectOK("PUT", "/mine/alice.json", body: "1", headers: TestServer.userHeaders("alice"))
            try await server.expectOK("POST", "/public.json", body: "1")
            #expect(try await server.request("POST", "/mine.json", body: "1").status == 401)
            try await server.expectOK("PATCH", "/public.json", body: #"{"a": 1}"#)
        }
    }

    @Test func nonAdminBodiesShareABoundedBudget() async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.rules; $0.maxBufferedBodyBytes = 8 << 20 }) { server in
            // A body is counted twice (its text, then its parsed tree): one write that has sent
            // 3 MB of its 3.5 MB holds 6 MB of the 8 MB budget.
            let value = "\"" + String(repeating: "x", count: (7 << 19) - 2) + "\""
            let slow = try Self.promise(server, "PUT", "/public/big.json", length: value.utf8.count)
            try slow.sendBody(Array(value.utf8.prefix(3 << 20)))
            // The server counts the bytes as it reads them: wait until it has.
            let deadline = ContinuousClock.now + .seconds(30)
            while try await Self.bufferedBodyBytes(server) < 6 << 20 {
                guard ContinuousClock.now < deadline else { throw TestServerError("the server did not read the body") }
                try await Task.sleep(for: .milliseconds(10))
            }
            // Another 1.5 MB body does not fit meanwhile: refused at once, and nothing is written.
            let second = "\"" + String(repeating: "y", count: (3 << 19) - 2) + "\""
            let refused = try await server.request("PUT", "/public/second.json", body: second)
            #expect(refused.status == 503, "\(refused.text.prefix(200))")
            #expect(refused.errorText == "The server is busy with other large writes. Try again.")
            #expect(try await server.read("/public/second.json") == "null")
            // Admins are not counted.
            try await server.expectOK("PUT", "/public/admin.json", body: second, headers: Self.admin)
            // Once the first is done its bytes are free again.
            try slow.sendBody(Array(value.utf8.dropFirst(3 << 20)))
            #expect(await slow.read { $0.contains("\r\n\r\n") }.hasPrefix("HTTP/1.1 200"))
            #expect(try await Self.bufferedBodyBytes(server) == 0)
            try await server.expectOK("PUT", "/public/second.json", body: second)
        }
    }

    @Test func aWithheldLongPollSegmentCannotPileUpTheRest() async throws {
        try await TestServer.with(configure: { $0.realtimeLimits.maxMessageBytes = 1_000 }) { server in
            let start = try await server.request("GET", "/.lp?start=t&ser=1&cb=1&v=5")
            let credentials = try #require(start.text.firstMatch(of: /pLPCommand\('start','([A-Za-z0-9]+)','([A-Za-z0-9]+)'\)/))
            let (id, password) = (String(credentials.1), String(credentials.2))
            // Segment 0 never comes; 2,000 bytes a segment after it.
            let chunk = String(repeating: "A", count: 2_000)
            // Sent together: a newer poll releases a waiting one, and the error ends them all.
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for segment in 1...4 {
                    group.addTask {
                        try await server.request(
                            "GET", "/.lp?id=\(id)&pw=\(password)&ser=\(segment + 1)&seg0=\(segment)&ts0=5&d0=\(chunk)"
                        ).text
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.contains { $0.contains("Too much data waits for a missing segment.") }, "\(answers.map { $0.prefix(200) })")
        }
    }

    /// The bytes non-admin bodies hold on the server now (its figures for admins).
    static func bufferedBodyBytes(_ server: TestServer) async throws -> Int {
        let stats = try await server.request("GET", "/.hearth/stats", headers: Self.admin)
        return try #require((stats.json as? [String: Any])?["bufferedBodyBytes"] as? Int)
    }
}
