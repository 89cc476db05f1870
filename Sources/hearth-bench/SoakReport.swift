import Foundation

/// A soak run's results, printed as text or JSON (`--json`).
struct SoakReport: Codable {
    struct Configuration: Codable {
        var url: String
        var run: String
        var seconds: Double
        var warmupSeconds: Double
        var restReaders: Int
        var restWriters: Int
        var sseListeners: Int
        var realtimeClients: Int
        var slowConsumers: Int
        var vanishing: Int
        var idleConnections: Int
        var rooms: Int
        var counters: Int
        /// Target rates per second: REST reads, REST writes, realtime writes, transactions.
        var readRate: Double
        var writeRate: Double
        var realtimeWriteRate: Double
        var transactionRate: Double
    }

    struct Latency: Codable {
        var count: Int
        var p50: Double?
        var p90: Double?
        var p99: Double?
        var max: Double?

        init(_ histogram: LatencyHistogram) {
            func ms(_ p: Double) -> Double? { histogram.percentile(p).map { (Double($0) / 1e4).rounded() / 100 } }
            count = histogram.count
            p50 = ms(0.5)
            p90 = ms(0.9)
            p99 = ms(0.99)
            max = ms(1)
        }
    }

    struct Quiet: Codable {
        var pressureBelow: Double
        var rows: Int
        var measuredRows: Int
        var restWrite: Latency
        var realtimeWrite: Latency
    }

    /// One row of the time series, every `--sample-every` seconds.
    struct Sample: Codable {
        var seconds: Double
        var warmup: Bool
        var serverMB: Double?
        var clientMB: Double
        /// Requests answered per second since the last row (REST, realtime writes, transactions).
        var requestsPerSecond: Double
        /// Values delivered to listeners per second since the last row.
        var eventsPerSecond: Double
        var errors: Int
        var restWriteP99: Double?
        var realtimeWriteP99: Double?
        /// The server's open listens and realtime connections (`/.hearth/stats`, with --token).
        var serverStreams: Int?
        var serverRealtime: Int?
        /// CPU used since the last row, in percent of one core (the server's with --server-pid).
        var serverCPU: Double?
        var clientCPU: Double?
        /// The machine's 1-minute load average, and the share of the last 10 s in which some
        /// runnable task waited for a CPU (/proc/pressure/cpu): other work on a shared machine.
        var loadAverage: Double?
        var cpuPressure: Double?
    }

    /// The machine before and after the run: load averages (1, 5 and 15 minutes).
    struct Machine: Codable {
        var cores: Int
        var loadBefore: [Double]
        var loadAfter: [Double]
        /// Means over the measured rows.
        var meanCPUPressure: Double?
        var meanServerCPU: Double?
        var meanClientCPU: Double?
    }

    struct Memory: Codable {
        var source: String
        var windowSeconds: Double
        var firstWindowMB: Double?
        var lastWindowMB: Double?
        var growthMB: Double?
        var growthPercent: Double?
        var slopeMBPerMinute: Double?
        var beforeClientsMB: Double?
    }

    struct Checks: Codable {
        var counterIncrements: Int
        var counterTotal: Int?
        var countersExact: Bool
        var listenersChecked: Int
        var missingDeliveries: Int
        var deliveriesComplete: Bool
        var unansweredAtEnd: Int
    }

    struct Release: Codable {
        var streams: Int?
        var realtime: Int?
        /// Seconds after the last close when they were read (at most 10).
        var seconds: Double
    }

    struct Verdict: Codable {
        var errors: Bool
        var memoryFlat: Bool?
        var writeP99: Bool?
        var countersExact: Bool
        var deliveriesComplete: Bool
        var line: String
    }

    var configuration: Configuration
    var operations: [String: Int]
    var errors: Int
    var errorsByKind: [String: Int]
    var firstErrors: [String]
    var latencies: [String: Latency]
    /// Write latencies of the measured rows in which the machine was quiet (CPU pressure below
    /// `pressureBelow` %): on a shared machine, the server's own figure without other work's.
    var quietWriteLatencies: Quiet
    var samples: [Sample]
    var memory: Memory
    var checks: Checks
    /// From the server's /metrics (with --token): streams it dropped for reading too slowly.
    var serverStreamDrops: [String: Double]
    /// The server's open listens and realtime connections once every client had closed (with
    /// --token): both should fall to 0 at once (with no other clients on the server).
    var serverAfterClose: Release?
    var machine: Machine
    var verdict: Verdict

    // MARK: - Text

    func text() -> String {
        var out: [String] = []
        let c = configuration
        out.append("soak of \(c.url) (run \(c.run)): \(c.seconds) s, \(c.warmupSeconds) s of warm-up")
        out.append(
            "clients: \(c.restReaders) REST readers, \(c.restWriters) REST writers, \(c.sseListeners) SSE listeners, "
                + "\(c.realtimeClients) realtime; \(c.slowConsumers) slow consumers, \(c.vanishing) vanishing, \(c.idleConnections) idle; "
                + "\(c.rooms) rooms, \(c.counters) counters")
        out.append(
            "target rates: REST reads \(Self.number(c.readRate))/s, REST writes \(Self.number(c.writeRate))/s, "
                + "realtime writes \(Self.number(c.realtimeWriteRate))/s, transactions \(Self.number(c.transactionRate))/s")
        out.append("")
        out.append("time series (server RSS from \(memory.source)):")
        out.append(
            "     s  phase     server MB  client MB  requests/s  events/s  errors  REST write p99  realtime write p99  streams  realtime"
                + "  server CPU  client CPU  load  CPU pressure")
        for row in samples {
            out.append(
                String(format: "%6.0f", row.seconds) + "  " + (row.warmup ? "warm-up " : "measured") + "  "
                    + Self.pad(Self.optional(row.serverMB, "%.1f"), 9) + "  " + Self.pad(String(format: "%.1f", row.clientMB), 9)
                    + "  " + Self.pad(String(format: "%.0f", row.requestsPerSecond), 10) + "  " + Self.pad(String(format: "%.0f", row.eventsPerSecond), 8)
                    + "  " + Self.pad(String(row.errors), 6) + "  " + Self.pad(Self.optional(row.restWriteP99, "%.1f ms"), 14)
                    + "  " + Self.pad(Self.optional(row.realtimeWriteP99, "%.1f ms"), 18)
                    + "  " + Self.pad(row.serverStreams.map(String.init) ?? "–", 7) + "  " + Self.pad(row.serverRealtime.map(String.init) ?? "–", 8)
                    + "  " + Self.pad(Self.optional(row.serverCPU, "%.0f %%"), 10) + "  " + Self.pad(Self.optional(row.clientCPU, "%.0f %%"), 10)
                    + "  " + Self.pad(Self.optional(row.loadAverage, "%.1f"), 4) + "  " + Self.pad(Self.optional(row.cpuPressure, "%.0f %%"), 12))
        }
        out.append("")
        out.append("operations:")
        for (name, count) in operations.sorted(by: { $0.key < $1.key }) { out.append("  \(name): \(count)") }
        out.append("")
        out.append("errors: \(errors)")
        for (kind, count) in errorsByKind.sorted(by: { $0.key < $1.key }) { out.append("  \(kind): \(count)") }
        if !firstErrors.isEmpty {
            out.append("  first:")
            for message in firstErrors { out.append("    \(message)") }
        }
        out.append("")
        out.append("latency after warm-up (ms):                count      p50      p90      p99      max")
        for kind in SoakRecorder.Latency.allCases {
            guard let figures = latencies[kind.rawValue] else { continue }
            out.append(
                Self.pad(kind.rawValue + (kind == .sseDelivery || kind == .realtimeDelivery ? " (write sent → event)" : ""), 40, left: true)
                    + Self.pad(String(figures.count), 8) + Self.pad(Self.optional(figures.p50, "%.1f"), 9)
                    + Self.pad(Self.optional(figures.p90, "%.1f"), 9) + Self.pad(Self.optional(figures.p99, "%.1f"), 9)
                    + Self.pad(Self.optional(figures.max, "%.1f"), 9))
        }
        let quiet = quietWriteLatencies
        out.append(
            "writes in the quiet rows (CPU pressure < \(Self.number(quiet.pressureBelow)) %: \(quiet.rows) of \(quiet.measuredRows) rows): "
                + "REST p50 \(Self.optional(quiet.restWrite.p50, "%.1f")), p99 \(Self.optional(quiet.restWrite.p99, "%.1f")), "
                + "max \(Self.optional(quiet.restWrite.max, "%.1f")) ms (\(quiet.restWrite.count)); "
                + "realtime p50 \(Self.optional(quiet.realtimeWrite.p50, "%.1f")), p99 \(Self.optional(quiet.realtimeWrite.p99, "%.1f")), "
                + "max \(Self.optional(quiet.realtimeWrite.max, "%.1f")) ms (\(quiet.realtimeWrite.count))")
        out.append("")
        out.append(
            "memory (server RSS, \(memory.source)): before the clients \(Self.optional(memory.beforeClientsMB, "%.1f MB")); "
                + "first \(Self.number(memory.windowSeconds)) s after warm-up \(Self.optional(memory.firstWindowMB, "%.1f MB")), "
                + "last \(Self.number(memory.windowSeconds)) s \(Self.optional(memory.lastWindowMB, "%.1f MB")): "
                + "growth \(Self.optional(memory.growthMB, "%+.1f MB")) (\(Self.optional(memory.growthPercent, "%+.1f %%"))), "
                + "slope \(Self.optional(memory.slopeMBPerMinute, "%+.2f MB/min"))")
        out.append(
            "checks: counters \(checks.counterTotal.map(String.init) ?? "unread") against \(checks.counterIncrements) acknowledged increments"
                + (checks.countersExact ? " (exact)" : " (NOT EXACT)") + "; \(checks.listenersChecked) listeners, "
                + "\(checks.missingDeliveries) acknowledged writes missing at a listener; \(checks.unansweredAtEnd) requests unanswered at the end")
        if !serverStreamDrops.isEmpty {
            out.append("server: streams dropped for reading too slowly: "
                + serverStreamDrops.sorted(by: { $0.key < $1.key }).map { "\($0.key) \(Int($0.value))" }.joined(separator: ", "))
        }
        if let release = serverAfterClose {
            out.append("server after the clients closed: \(release.streams.map(String.init) ?? "–") listens, "
                + "\(release.realtime.map(String.init) ?? "–") realtime connections (\(release.seconds) s after)")
        }
        out.append(
            "machine: \(machine.cores) cores; load average before \(machine.loadBefore.map { String(format: "%.2f", $0) }.joined(separator: " ")), "
                + "after \(machine.loadAfter.map { String(format: "%.2f", $0) }.joined(separator: " ")); measured rows: "
                + "CPU pressure \(Self.optional(machine.meanCPUPressure, "%.0f %%")), server CPU \(Self.optional(machine.meanServerCPU, "%.0f %%")), "
                + "client CPU \(Self.optional(machine.meanClientCPU, "%.0f %%")) of one core (means)")
        out.append("verdict: \(verdict.line)")
        return out.joined(separator: "\n") + "\n"
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    private static func optional(_ value: Double?, _ format: String) -> String {
        value.map { String(format: format, $0) } ?? "–"
    }

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + padding : padding + text
    }
}

/// The memory series' growth after the warm-up: the mean of the last window against the mean
/// of the first window after the warm-up, and the least-squares slope over all of it.
enum SoakMemory {
    static func growth(
        _ samples: [(seconds: Double, megabytes: Double)], warmup: Double, end: Double, window: Double
    ) -> (first: Double?, last: Double?, slopePerMinute: Double?) {
        let measured = samples.filter { $0.seconds >= warmup }
        func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
        let first = mean(measured.filter { $0.seconds <= warmup + window }.map(\.megabytes))
        let last = mean(measured.filter { $0.seconds >= end - window }.map(\.megabytes))
        guard measured.count >= 2 else { return (first, last, nil) }
        let n = Double(measured.count)
        let meanX = measured.map(\.seconds).reduce(0, +) / n
        let meanY = measured.map(\.megabytes).reduce(0, +) / n
        let covariance = measured.reduce(0) { $0 + ($1.seconds - meanX) * ($1.megabytes - meanY) }
        let variance = measured.reduce(0) { $0 + ($1.seconds - meanX) * ($1.seconds - meanX) }
        return (first, last, variance > 0 ? covariance / variance * 60 : nil)
    }
}
