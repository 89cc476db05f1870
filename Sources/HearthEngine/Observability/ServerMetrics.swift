import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The server's figures as Prometheus metrics: what every transport, the store, the rules, the
/// accounts and the files report, through swift-metrics' API with a Prometheus backend of its
/// own (no process-wide metrics system: each server, and each test, has its registry).
///
/// Names and labels (docs/operations.md lists them with their meaning):
/// - `hearth_requests_total{transport,operation,status}`, `hearth_request_duration_seconds{transport,operation}`
/// - `hearth_realtime_requests_total{action}`
/// - `hearth_commits_total{database}`, `hearth_writes_total{database}`,
///   `hearth_commit_records{database}` (records per commit), `hearth_commit_duration_seconds{database}` (the durable commit: SQLite's fsync, or PostgreSQL's)
/// - `hearth_rules_denials_total{database,access}`
/// - account requests are `hearth_requests_total{transport="auth",operation=<method>}` (sign-ins
///   and their failures by status)
/// - `hearth_file_bytes_total{direction}`
/// - `hearth_stream_drops_total{transport}` (streams ended because their reader fell behind)
/// - `hearth_connections_refused_total{reason}`, `hearth_connection_timeouts_total{phase}`
///   (``ConnectionLimits`` at work)
/// - `hearth_backups_total{result}`, `hearth_backup_last_success_timestamp_seconds`,
///   `hearth_backup_last_bytes` (scheduled backups)
/// - gauges read at each scrape: `hearth_connections{kind}`, `hearth_database_sequence{database}`,
///   `hearth_database_listeners{database}`, `hearth_resident_memory_bytes`, `hearth_uptime_seconds`
///
/// Label values come from fixed sets or database names (bounded: names are validated), never
/// from user input such as paths or emails, so the number of series stays bounded.
///
/// Threading: the metric objects are cached under a lock per kind; swift-prometheus's handlers
/// are thread-safe.
public final class ServerMetrics: Sendable {
    /// Where the figures are kept and rendered from.
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let counters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])
    private let recorders = Mutex<[String: CoreMetrics.Recorder]>([:])
    private let gauges = Mutex<[String: CoreMetrics.Gauge]>([:])
    /// The metrics of every request and refusal, by their labels: these are counted on every
    /// request, and looking them up by their label values is much cheaper than by the text key.
    private let requestSeries = Mutex<[RequestSeries: (CoreMetrics.Counter, CoreMetrics.Timer)]>([:])
    private let denialSeries = Mutex<[DenialSeries: CoreMetrics.Counter]>([:])

    private struct RequestSeries: Hashable {
        let transport: String
        let operation: String
        let status: Int
    }

    private let commitSeries = Mutex<[String: CommitSeries]>([:])

    private struct CommitSeries: Sendable {
        let commits: CoreMetrics.Counter
        let writes: CoreMetrics.Counter
        let records: CoreMetrics.Recorder
        let duration: CoreMetrics.Timer
    }

    private struct DenialSeries: Hashable {
        let database: String
        let access: String
    }

    /// Metrics kept in `registry`: a fresh one per server (and per test) unless the caller shares one.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        factory.valueHistogramBuckets["hearth_commit_records"] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000]
        self.factory = factory
    }

    // MARK: - What the server reports

    /// An HTTP request answered (a stream: when its headers went out).
    public func request(transport: String, operation: String, status: Int, duration: Duration) {
        let series = RequestSeries(transport: transport, operation: operation, status: status)
        let (requests, durations) = requestSeries.withLock({ $0[series] }) ?? {
            let made = (
                counter("hearth_requests_total", ["transport": transport, "operation": operation, "status": String(status)]),
                timer("hearth_request_duration_seconds", ["transport": transport, "operation": operation])
            )
            requestSeries.withLock { $0[series] = made }
            return made
        }()
        requests.increment()
        durations.recordNanoseconds(duration.nanoseconds)
    }

    /// A realtime-protocol request received (`put`, `transaction`, `merge`, `listen`, …).
    func realtimeRequest(action: String) {
        counter("hearth_realtime_requests_total", ["action": action]).increment()
    }

    /// A durable commit of `records` writes to `database`, which took `duration`.
    public func committed(database: String, records: Int, duration: Duration) {
        let series = commitSeries.withLock({ $0[database] }) ?? {
            let made = CommitSeries(
                commits: counter("hearth_commits_total", ["database": database]),
                writes: counter("hearth_writes_total", ["database": database]),
                records: recorder("hearth_commit_records", ["database": database]),
                duration: timer("hearth_commit_duration_seconds", ["database": database]))
            commitSeries.withLock { $0[database] = made }
            return made
        }()
        series.commits.increment()
        series.writes.increment(by: records)
        series.records.record(records)
        series.duration.recordNanoseconds(duration.nanoseconds)
    }

    /// A read or write the security rules refused.
    func denied(database: String, access: String) {
        let series = DenialSeries(database: database, access: access)
        let denials = denialSeries.withLock({ $0[series] }) ?? {
            let made = counter("hearth_rules_denials_total", ["database": database, "access": access])
            denialSeries.withLock { $0[series] = made }
            return made
        }()
        denials.increment()
    }

    /// File content stored (`in`) or served (`out`).
    public func fileBytes(direction: String, count: Int) {
        guard count > 0 else { return }
        counter("hearth_file_bytes_total", ["direction": direction]).increment(by: count)
    }

    /// A stream ended because its reader fell too far behind.
    public func streamDropped(transport: String) {
        counter("hearth_stream_drops_total", ["transport": transport]).increment()
    }

    /// A connection, or a request a trusted proxy forwarded, turned away by ``ConnectionLimits``:
    /// `server_full`, `address_full` (a peer's connections) or `forwarded_full` (a client's
    /// requests through a proxy).
    public func connectionRefused(reason: String) {
        counter("hearth_connections_refused_total", ["reason": reason]).increment()
    }

    /// A connection closed because its client was too slow: `head`, `body` or `idle` (see
    /// ``ConnectionLimits``).
    public func connectionTimedOut(phase: String) {
        counter("hearth_connection_timeouts_total", ["phase": phase]).increment()
    }

    /// A scheduled backup finished: its size, how long it took, and when (ms since the epoch).
    public func backupFinished(bytes: Int64, duration: Duration, at time: Int64) {
        counter("hearth_backups_total", ["result": "ok"]).increment()
        gauge("hearth_backup_last_success_timestamp_seconds", [:], Double(time) / 1000)
        gauge("hearth_backup_last_bytes", [:], Double(bytes))
        timer("hearth_backup_duration_seconds", [:]).recordNanoseconds(duration.nanoseconds)
    }

    /// A scheduled backup failed.
    public func backupFailed() {
        counter("hearth_backups_total", ["result": "failed"]).increment()
    }

    /// An attempt to deliver an event to a function: its result (`delivered`, `failed`,
    /// `unreachable`, `dead-lettered`), how long it took, and how long after the event's commit
    /// it started (milliseconds).
    public func functionDelivery(function: String, result: String, duration: Duration, lag: Int64) {
        counter("hearth_function_deliveries_total", ["function": function, "result": result]).increment()
        timer("hearth_function_delivery_duration_seconds", ["function": function]).recordNanoseconds(duration.nanoseconds)
        timer("hearth_function_delivery_lag_seconds", ["function": function]).recordNanoseconds(max(0, lag) * 1_000_000)
    }

    /// A scheduled function's run.
    public func scheduledRun(function: String, succeeded: Bool) {
        counter("hearth_function_schedule_runs_total", ["function": function, "result": succeeded ? "ok" : "failed"]).increment()
    }

    /// Sets a gauge read at scrape time.
    public func gauge(_ name: String, _ labels: [String: String] = [:], _ value: Double) {
        Self.cached(gauges, Self.key(name, labels)) {
            CoreMetrics.Gauge(label: name, dimensions: Self.dimensions(labels), factory: factory)
        }.record(value)
    }

    /// The Prometheus text exposition of every figure.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    // MARK: - Metric objects, made once per name and labels

    private func counter(_ name: String, _ labels: [String: String]) -> CoreMetrics.Counter {
        Self.cached(counters, Self.key(name, labels)) {
            CoreMetrics.Counter(label: name, dimensions: Self.dimensions(labels), factory: factory)
        }
    }

    private func timer(_ name: String, _ labels: [String: String]) -> CoreMetrics.Timer {
        Self.cached(timers, Self.key(name, labels)) {
            CoreMetrics.Timer(label: name, dimensions: Self.dimensions(labels), factory: factory)
        }
    }

    private func recorder(_ name: String, _ labels: [String: String]) -> CoreMetrics.Recorder {
        Self.cached(recorders, Self.key(name, labels)) {
            CoreMetrics.Recorder(label: name, dimensions: Self.dimensions(labels), aggregate: true, factory: factory)
        }
    }

    /// The metric under `key` in `cache`, made by `make` the first time.
    private static func cached<Metric>(_ cache: borrowing Mutex<[String: Metric]>, _ key: String, _ make: () -> Metric) -> Metric {
        cache.withLock { metrics in
            if let existing = metrics[key] { return existing }
            let made = make()
            metrics[key] = made
            return made
        }
    }

    private static func dimensions(_ labels: [String: String]) -> [(String, String)] {
        labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private static func key(_ name: String, _ labels: [String: String]) -> String {
        ([name] + dimensions(labels).map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1}")
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole + attoseconds / 1_000_000_000
    }
}
