import Foundation
import HearthTesting
import Testing

/// `hearth serve --log-format json --access-log`: one JSON object per line on standard error,
/// a line per request with its request ID and no credential in it; `/.hearth/logs` gives
/// admins the recent warnings and errors.
@Suite struct ServerLogTests {
    @Test func jsonLinesWithRequestIDsAndNoSecrets() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let server = try HearthProcess(
            data: folder.url, extraArguments: ["--log-format", "json", "--access-log", "--admin-token", "tok-123"])
        defer { _ = server.terminate() }
        _ = try await httpRequest("PUT", server.url("/a.json?auth=tok-123&print=silent"), body: Data("1".utf8))
        _ = try await httpRequest("GET", server.url("/.lp?start=t&ser=1&cb=1&v=5&ns=default"))
        var lines: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            lines = server.log.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            }
            if lines.contains(where: { ($0["path"] as? String)?.hasPrefix("/.lp") == true }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Every line is a JSON object.
        let raw = server.log.split(separator: "\n")
        #expect(!raw.isEmpty && lines.count == raw.count)
        let put = try #require(lines.first { $0["method"] as? String == "PUT" })
        #expect(put["message"] as? String == "request")
        #expect(put["level"] as? String == "info")
        #expect(put["status"] as? String == "204")  // print=silent
        #expect(put["path"] as? String == "/a.json?auth=***&print=silent")
        #expect((put["hb.request.id"] as? String)?.isEmpty == false)
        #expect(put["time"] is String && put["transport"] as? String == "rest")
        #expect(!server.log.contains("tok-123"))

        // Recent problems are for admins.
        let denied = try await httpRequest("GET", server.url("/.hearth/logs"))
        #expect(denied.status == 401)
        let recent = try await httpRequest("GET", server.url("/.hearth/logs"), headers: ["Authorization": "Bearer tok-123"])
        #expect(recent.status == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: recent.body) as? [String: Any])
        #expect(body["entries"] is [Any])
    }
}
