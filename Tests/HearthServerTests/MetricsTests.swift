import Foundation
import HearthServer
import HearthTesting
import Logging
import Testing

/// `/metrics`: Prometheus's text format for admins (or anyone on `--metrics-port`), counting
/// requests by transport, operation and status, durable commits, rules refusals, file bytes,
/// and the gauges read at each scrape.
@Suite struct MetricsTests {
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    /// The value of the sample whose name and labels are `series` (labels in sorted order, as
    /// swift-prometheus writes them), or nil.
    static func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func requestsCommitsAndGaugesAreCountedForAdmins() async throws {
        try await TestServer.with { server in
            for index in 0..<3 {
                #expect(try await server.request("PUT", "/items/i\(index).json", body: "\(index)").status == 200)
            }
            #expect(try await server.request("GET", "/items.json").status == 200)
            #expect(try await server.request("GET", "/items.json?orderBy=%22nope").status == 400)

            let denied = try await server.request("GET", "/metrics")
            #expect(denied.status == 401)
            #expect(try JSONSerialization.jsonObject(with: denied.body) as? [String: String] == ["error": "Permission denied"])

            let scrape = try await server.request("GET", "/metrics", headers: Self.admin)
            #expect(scrape.status == 200)
            #expect(scrape.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(decoding: scrape.body, as: UTF8.self)
            #expect(Self.sample(text, #"hearth_requests_total{operation="put",status="200",transport="rest"}"#) == 3)
            #expect(Self.sample(text, #"hearth_requests_total{operation="get",status="200",transport="rest"}"#) == 1)
            #expect(Self.sample(text, #"hearth_requests_total{operation="get",status="400",transport="rest"}"#) == 1)
            #expect(Self.sample(text, #"hearth_requests_total{operation="get",status="401",transport="admin"}"#) == 1)
            #expect(Self.sample(text, #"hearth_request_duration_seconds_count{operation="put",transport="rest"}"#) == 3)
            #expect(Self.sample(text, #"hearth_writes_total{database="default"}"#) == 3)
            #expect((Self.sample(text, #"hearth_commits_total{database="default"}"#) ?? 0) >= 1)
            #expect((Self.sample(text, #"hearth_commit_duration_seconds_count{database="default"}"#) ?? 0) >= 1)
            #expect((Self.sample(text, #"hearth_database_sequence{database="default"}"#) ?? 0) == 3)
            #expect(Self.sample(text, #"hearth_connections{kind="listens"}"#) == 0)
            #expect((Self.sample(text, "hearth_uptime_seconds") ?? -1) >= 0)
            // A method other than GET changes nothing and says so.
            #expect(try await server.request("POST", "/metrics", body: "x", headers: Self.admin).status == 400)
        }
    }

    @Test func rulesRefusalsAndAccountMethodsAreCounted() async throws {
        let rules = #"{"rules": {"open": {".read": true, ".write": true}, "closed": {".read": false, ".write": false}}}"#
        try await TestServer.with(configure: { $0.defaultRules = rules }) { server in
            #expect(try await server.request("PUT", "/closed/x.json", body: "1").status == 401)
            #expect(try await server.request("GET", "/closed.json").status == 401)
            #expect(try await server.request("PUT", "/open/x.json", body: "1").status == 200)
            let signUp = try await server.request(
                "POST", "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", body: #"{"returnSecureToken": true}"#,
                headers: ["Content-Type": "application/json"])
            #expect(signUp.status == 200)
            // A made-up method is counted as "other", so clients cannot invent label values.
            _ = try await server.request("POST", "/identitytoolkit.googleapis.com/v1/accounts:madeUp\(UUID().uuidString)?key=k", body: "{}")
            let text = String(decoding: try await server.request("GET", "/metrics", headers: Self.admin).body, as: UTF8.self)
            #expect(Self.sample(text, #"hearth_rules_denials_total{access="write",database="default"}"#) == 1)
            #expect(Self.sample(text, #"hearth_rules_denials_total{access="read",database="default"}"#) == 1)
            #expect(Self.sample(text, #"hearth_requests_total{operation="signUp",status="200",transport="auth"}"#) == 1)
            #expect(text.contains(#"operation="other""#))
            #expect(!text.contains("madeUp"))
        }
    }

    @Test func fileBytesAreCountedInAndOut() async throws {
        try await TestServer.with { server in
            let content = Data(repeating: 7, count: 12_345)
            let upload = try await server.request(
                "POST", "/v0/b/hearth.appspot.com/o?uploadType=media&name=m%2Fa.bin", data: content,
                headers: ["Content-Type": "application/octet-stream", "Authorization": "Bearer owner"])
            #expect(upload.status == 200)
            let download = try await server.request(
                "GET", "/v0/b/hearth.appspot.com/o/m%2Fa.bin?alt=media", headers: ["Authorization": "Bearer owner"])
            #expect(download.body == content)
            let text = String(decoding: try await server.request("GET", "/metrics", headers: Self.admin).body, as: UTF8.self)
            #expect(Self.sample(text, #"hearth_file_bytes_total{direction="in"}"#) == 12_345)
            #expect(Self.sample(text, #"hearth_file_bytes_total{direction="out"}"#) == 12_345)
        }
    }

    @Test func realtimeRequestsAreCountedByKind() async throws {
        try await TestServer.with { server in
            let client = try await RealtimeTestClient.connect(server)
            _ = try await client.request("p", #"{"p": "/a", "d": 1}"#)
            _ = try await client.request("p", #"{"p": "/a", "d": 2, "h": "nope"}"#)
            _ = try await client.request("q", #"{"p": "/a", "h": ""}"#)
            let text = String(decoding: try await server.request("GET", "/metrics", headers: Self.admin).body, as: UTF8.self)
            #expect(Self.sample(text, #"hearth_realtime_requests_total{action="put"}"#) == 1)
            #expect(Self.sample(text, #"hearth_realtime_requests_total{action="transaction"}"#) == 1)
            #expect(Self.sample(text, #"hearth_realtime_requests_total{action="listen"}"#) == 1)
            #expect(Self.sample(text, #"hearth_connections{kind="realtime"}"#) == 1)
        }
    }

    @Test func theMetricsPortAnswersOnlyMetricsWithoutACredential() async throws {
        try await TestServer.with(configure: { $0.metricsPort = 0 }) { server in
            let port = try #require(server.metricsPort)
            _ = try await server.request("PUT", "/a.json", body: "1")
            let scrape = try await httpRequest("GET", URL(string: "http://127.0.0.1:\(port)/metrics")!)
            #expect(scrape.status == 200)
            #expect(String(decoding: scrape.body, as: UTF8.self).contains(#"hearth_writes_total{database="default"} 1"#))
            let other = try await httpRequest("GET", URL(string: "http://127.0.0.1:\(port)/a.json")!)
            #expect(other.status == 404)
        }
    }
}

/// What logs may show of a request, and the recent problems kept for the console.
@Suite struct LogLineTests {
    @Test func secretsInQueriesAreHidden() {
        let path = HearthResponderTestHooks.loggablePath("/a.json?auth=tok&print=silent&access_token=x&orderBy=%22k%22&pw=p")
        #expect(path == "/a.json?auth=***&print=silent&access_token=***&orderBy=%22k%22&pw=***")
        #expect(HearthResponderTestHooks.loggablePath("/plain.json") == "/plain.json")
    }

    @Test func recentEntriesKeepTheNewestWarningsAndErrors() {
        let recent = RecentLogEntries(capacity: 3)
        for index in 0..<5 {
            recent.record(level: .error, message: "e\(index)", metadata: ["i": "\(index)"], source: "test", at: Date())
        }
        recent.record(level: .info, message: "not kept", metadata: [:], source: "test", at: Date())
        #expect(recent.newestFirst().map(\.message) == ["e4", "e3", "e2"])
        #expect(recent.newestFirst().first?.metadata == ["i": "4"])
    }
}
