import Foundation
import HearthCore
@testable import HearthEngine
@testable import HearthServer
import HearthTesting
import Synchronization
import Testing

/// The server's figures kept over the last hours for the console's graphs
/// (`GET /.hearth/metrics/history`), and the time filters of the admin logs.
@Suite("Metrics history")
struct MetricsHistoryTests {
    static let exposition = """
        # TYPE hearth_requests_total counter
        hearth_requests_total{operation="get",status="200",transport="rest"} 7
        hearth_requests_total{operation="put",status="503",transport="rest"} 2
        hearth_requests_total{operation="open",status="200",transport="sse"} 3
        hearth_realtime_requests_total{action="p"} 4
        hearth_writes_total{database="a"} 5
        hearth_writes_total{database="b"} 1
        hearth_commits_total{database="a"} 3
        hearth_rules_denials_total{access="read",database="a"} 1
        hearth_request_duration_seconds_bucket{le="0.005",transport="rest"} 6
        hearth_request_duration_seconds_bucket{le="0.005",transport="sse"} 1
        hearth_request_duration_seconds_bucket{le="+Inf",transport="rest"} 9
        hearth_connections{kind="listens"} 2
        hearth_connections{kind="realtime"} 1
        hearth_resident_memory_bytes 1048576
        hearth_odd{label="with \\"quote\\", and comma"} 1
        not a sample line
        """

    @Test func aSampleSumsTheSeriesTheGraphsNeed() {
        let sample = MetricsSample(exposition: Self.exposition, time: 1_000)
        #expect(sample.time == 1_000)
        #expect(sample.requests == ["rest": 9, "sse": 3])
        #expect(sample.serverErrors == ["rest": 2])
        #expect(sample.realtimeRequests == 4)
        #expect(sample.writes == 6 && sample.commits == 3 && sample.denials == 1)
        #expect(sample.latencyBuckets == ["0.005": 7, "+Inf": 9])
        #expect(sample.connections == ["listens": 2, "realtime": 1])
        #expect(sample.memoryBytes == 1_048_576)
        #expect(MetricsSample.parse(#"hearth_odd{label="with \"quote\", and comma"} 1"#)?.labels == ["label": #"with "quote", and comma"#])
    }

    @Test func theRingKeepsTheNewestSamplesInOrder() {
        let history = MetricsHistory(capacity: 3, interval: .seconds(10))
        #expect(history.samples().isEmpty)
        for time in stride(from: Int64(0), through: 60_000, by: 10_000) {
            history.record(MetricsSample(exposition: "", time: time))
        }
        #expect(history.samples().map(\.time) == [40_000, 50_000, 60_000])
        let since = TimeFilter(since: Date(timeIntervalSince1970: 50))
        #expect(history.samples(in: since).map(\.time) == [50_000, 60_000])
        let until = TimeFilter(until: Date(timeIntervalSince1970: 45))
        #expect(history.samples(in: until).map(\.time) == [40_000])
    }

    @Test func timeFiltersReadMillisecondsAndISO8601AndRefuseNonsense() throws {
        let filter = try TimeFilter(["since": "1000", "until": "2026-01-31T09:30:00Z"])
        #expect(filter.since == Date(timeIntervalSince1970: 1))
        #expect(filter.until == Date(timeIntervalSince1970: 1_769_851_800))
        #expect(try TimeFilter(["since": "2026-01-31T09:30:00.250Z"]).since == Date(timeIntervalSince1970: 1_769_851_800.25))
        #expect(try TimeFilter([:]) == TimeFilter())
        #expect(throws: HearthError.self) { try TimeFilter(["since": "yesterday"]) }
        #expect(throws: HearthError.self) { try TimeFilter(["since": "2000", "until": "1000"]) }
    }

    @Test func theServerSamplesOnItsOwnAndAnswersAdminsOnly() async throws {
        // A sample every 50 ms, so the history fills without anyone asking for it.
        try await withServer(configure: { $0.metricsHistoryInterval = .milliseconds(50) }) { server in
            _ = try await server.request("PUT", "/a.json", body: "1", headers: TestServer.adminHeaders)
            var samples: [[String: Any]] = []
            for _ in 0..<200 where samples.count < 3 {
                let read = try await server.request("GET", "/.hearth/metrics/history", headers: TestServer.adminHeaders)
                #expect(read.status == 200, "\(read.text)")
                let body = try #require(try JSONSerialization.jsonObject(with: read.body) as? [String: Any])
                #expect(body["intervalSeconds"] as? Double == 0.05)
                #expect(body["capacity"] as? Int == 2_160)
                samples = try #require(body["samples"] as? [[String: Any]])
                if samples.count < 3 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(samples.count >= 3)
            let times = samples.compactMap { $0["time"] as? Int64 }
            #expect(times == times.sorted())
            #expect(samples.last?["requests"] is [String: Any], "\(samples.last ?? [:])")

            let since = try await server.request(
                "GET", "/.hearth/metrics/history?since=\(times.last! + 1)&until=\(times.last! + 1)", headers: TestServer.adminHeaders)
            #expect(since.text.contains(#""samples":[]"#), "\(since.text)")
            let bad = try await server.request("GET", "/.hearth/metrics/history?since=soon", headers: TestServer.adminHeaders)
            #expect(bad.status == 400 && bad.text.contains("since must be a time"))
            let anonymous = try await server.request("GET", "/.hearth/metrics/history?since=soon")
            #expect(anonymous.status == 401, "refused before the parameters are read")
            let user = try await server.request("GET", "/.hearth/metrics/history", headers: TestServer.userHeaders("u1"))
            #expect(user.status == 401 || user.status == 403)
            #expect(!user.text.contains("samples"))
        }
    }

    @Test func samplesAreTimedByTheInjectedClock() async throws {
        // The server's clock, not the wall's: a test (or a replay) decides what time it is.
        let now = Mutex<Int64>(1_700_000_000_000)
        try await withServer(configure: {
            $0.metricsHistoryInterval = .milliseconds(50)
            $0.clock = { now.withLock { time in
                time += 10_000
                return time
            } }
        }) { server in
            var times: [Int64] = []
            for _ in 0..<200 where times.count < 2 {
                let read = try await server.request("GET", "/.hearth/metrics/history", headers: TestServer.adminHeaders)
                let body = try #require(try JSONSerialization.jsonObject(with: read.body) as? [String: Any])
                times = try #require(body["samples"] as? [[String: Any]]).compactMap { ($0["time"] as? NSNumber)?.int64Value }
                if times.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(times.count >= 2)
            #expect(times.allSatisfy { $0 > 1_700_000_000_000 && $0 % 10_000 == 0 }, "\(times)")
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
            let since = try await server.request(
                "GET", "/.hearth/metrics/history?since=\(times[1])", headers: TestServer.adminHeaders)
            let kept = try #require((try JSONSerialization.jsonObject(with: since.body) as? [String: Any])?["samples"] as? [[String: Any]])
            #expect(kept.compactMap { ($0["time"] as? NSNumber)?.int64Value }.allSatisfy { $0 >= times[1] })
        }
    }

    @Test func theRequestLogAndRecentProblemsFilterByTime() async throws {
        let log = RequestLog(capacity: 10)
        for second in [10.0, 20.0, 30.0] {
            log.record(path: "/t\(Int(second))", time: Date(timeIntervalSince1970: second), method: "GET", transport: "rest")
        }
        #expect(log.newestFirst(.init(since: Date(timeIntervalSince1970: 20))).map(\.path) == ["/t30", "/t20"])
        #expect(log.newestFirst(.init(until: Date(timeIntervalSince1970: 20))).map(\.path) == ["/t20", "/t10"])
        try await withServer { server in
            _ = try await server.request("GET", "/old.json", headers: TestServer.adminHeaders)
            let future = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            let none = try await server.request("GET", "/.hearth/requests?since=\(future)", headers: TestServer.adminHeaders)
            #expect(none.text.contains(#""entries":[]"#), "\(none.text)")
            let all = try await server.request("GET", "/.hearth/requests?until=\(future)", headers: TestServer.adminHeaders)
            #expect(all.text.contains("/old.json"))
            let bad = try await server.request("GET", "/.hearth/requests?until=later", headers: TestServer.adminHeaders)
            #expect(bad.status == 400 && bad.text.contains("until must be a time"))
            let logs = try await server.request("GET", "/.hearth/logs?since=\(future)", headers: TestServer.adminHeaders)
            #expect(logs.status == 200 && logs.text.contains(#""entries":[]"#))
            let badLogs = try await server.request("GET", "/.hearth/logs?since=2000&until=1000", headers: TestServer.adminHeaders)
            #expect(badLogs.status == 400)
            let user = try await server.request("GET", "/.hearth/logs?since=nonsense", headers: TestServer.userHeaders("u1"))
            #expect(user.status == 401 || user.status == 403)
        }
    }
}
