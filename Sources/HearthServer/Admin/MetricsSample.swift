import Foundation

/// One reading of the server's figures kept in ``MetricsHistory``: the counters the console's
/// graphs turn into rates (summed over the labels the graphs do not split by) and the gauges as
/// they were, read from the Prometheus exposition at `/metrics`. A few dozen numbers, so six
/// hours of them stay small.
struct MetricsSample: Sendable, Equatable, Encodable {
    /// When it was read, in milliseconds since the epoch.
    var time: Int64
    /// `hearth_requests_total` by `transport`.
    var requests: [String: Double] = [:]
    /// `hearth_requests_total` answered with a 5xx status, by `transport`.
    var serverErrors: [String: Double] = [:]
    /// `hearth_realtime_requests_total`.
    var realtimeRequests: Double = 0
    /// `hearth_writes_total` and `hearth_commits_total`.
    var writes: Double = 0
    var commits: Double = 0
    /// `hearth_rules_denials_total`.
    var denials: Double = 0
    /// `hearth_request_duration_seconds_bucket` by its `le` bound (cumulative counts).
    var latencyBuckets: [String: Double] = [:]
    /// `hearth_connections` by `kind` (`listens`, `realtime`).
    var connections: [String: Double] = [:]
    /// `hearth_resident_memory_bytes`, where the system tells.
    var memoryBytes: Double?

    /// Reads the figures out of Prometheus's text format; lines it does not need, comments and
    /// malformed lines are skipped (one odd line must not lose the sample).
    init(exposition: String, time: Int64) {
        self.time = time
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            guard let sample = Self.parse(line) else { continue }
            let labels = sample.labels
            switch sample.name {
            case "hearth_requests_total":
                let transport = labels["transport"] ?? ""
                requests[transport, default: 0] += sample.value
                if labels["status"]?.first == "5" { serverErrors[transport, default: 0] += sample.value }
            case "hearth_realtime_requests_total": realtimeRequests += sample.value
            case "hearth_writes_total": writes += sample.value
            case "hearth_commits_total": commits += sample.value
            case "hearth_rules_denials_total": denials += sample.value
            case "hearth_request_duration_seconds_bucket":
                if let bound = labels["le"] { latencyBuckets[bound, default: 0] += sample.value }
            case "hearth_connections": connections[labels["kind"] ?? "", default: 0] += sample.value
            case "hearth_resident_memory_bytes": memoryBytes = sample.value
            default: continue
            }
        }
    }

    /// `name{label="value",…} value`, or nil for a line that is not a sample.
    static func parse(_ line: Substring) -> (name: String, labels: [String: String], value: Double)? {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard let valueStart = text.lastIndex(of: " ") else { return nil }
        guard let value = Double(text[text.index(after: valueStart)...]) ?? Self.special(text[text.index(after: valueStart)...]) else {
            return nil
        }
        let series = text[..<valueStart].trimmingCharacters(in: .whitespaces)
        guard let brace = series.firstIndex(of: "{") else { return (series, [:], value) }
        guard series.last == "}" else { return nil }
        let name = String(series[..<brace])
        var labels: [String: String] = [:]
        // key="value" pairs; values may hold escaped quotes and commas.
        var rest = series[series.index(after: brace)..<series.index(before: series.endIndex)]
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
            var index = rest.index(after: equals)
            guard index < rest.endIndex, rest[index] == "\"" else { return nil }
            index = rest.index(after: index)
            var value = ""
            var closed = false
            while index < rest.endIndex {
                let character = rest[index]
                if character == "\\", rest.index(after: index) < rest.endIndex {
                    index = rest.index(after: index)
                    value.append(rest[index] == "n" ? "\n" : rest[index])
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    value.append(character)
                }
                index = rest.index(after: index)
            }
            guard closed else { return nil }
            labels[key] = value
            rest = rest[rest.index(after: index)...]
        }
        return (name, labels, value)
    }

    private static func special(_ text: Substring) -> Double? {
        switch text {
        case "+Inf", "Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: nil
        }
    }
}
