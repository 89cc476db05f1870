/// Compares two runs' events as the event suite does (`Tests/Events/events_support.py`,
/// `canonical_steps` and `compare_runs`): server timestamps are equal to each other; an event
/// that repeats a listener's last report for the same location but for a timestamp is dropped
/// (a client raises it or not depending on whether its estimate of the server's time was
/// exact); within a step each listener's events must be the same, in the same order, while
/// how different listeners' events interleave is not compared.
enum EventComparison {
    /// Each step's events, normalized, with timestamp-only repeats dropped.
    static func canonical(_ steps: [[JSONValue]]) -> [[JSONValue]] {
        var seen: [String: (raw: JSONValue, normalized: JSONValue)] = [:]
        return steps.map { events in
            var kept: [JSONValue] = []
            for event in events {
                let listener = event["listener"]?.string ?? "", type = event["type"]?.string ?? ""
                let raw = event["value"] ?? .null, value = raw.normalized
                let slot = type == "value" ? "\(listener) value" : "\(listener) child \(event["key"]?.json ?? "null")"
                if type == "value" || type == "child_changed", let last = seen[slot], last.normalized == value, last.raw != raw {
                    seen[slot] = (raw, value)
                    continue
                }
                if type == "child_removed" {
                    seen[slot] = nil
                } else if type != "cancel" {
                    seen[slot] = (raw, value)
                }
                kept.append(.object([
                    "listener": event["listener"] ?? .null, "type": event["type"] ?? .null, "key": event["key"] ?? .null,
                    "prev": event["prev"] ?? .null, "value": value,
                ]))
            }
            return kept
        }
    }

    /// Nil when every step's events agree; else a report of the first step that differs.
    static func difference(expected: [[JSONValue]], actual: [[JSONValue]], steps: [JSONValue]) -> String? {
        let wanted = canonical(expected), got = canonical(actual)
        guard wanted.count == got.count else { return "the core reported \(got.count) steps, the SDK \(wanted.count)" }
        for (index, (want, have)) in zip(wanted, got).enumerated() where want != have {
            guard byListener(want) != byListener(have) else { continue }
            var lines = ["step \(index) \(index < steps.count ? steps[index].json : ""): the events differ", "  the SDK:"]
            lines += want.map { "    " + describe($0) }
            lines.append("  the core:")
            lines += have.map { "    " + describe($0) }
            return lines.joined(separator: "\n")
        }
        return nil
    }

    private static func byListener(_ events: [JSONValue]) -> [String: [JSONValue]] {
        Dictionary(grouping: events) { $0["listener"]?.string ?? "" }
    }

    static func describe(_ event: JSONValue) -> String {
        let type = event["type"]?.string ?? "?"
        var text = "\(event["listener"]?.string ?? "?") \(type) key=\(event["key"]?.json ?? "null")"
        if !["value", "child_removed", "cancel"].contains(type) { text += " prev=\(event["prev"]?.json ?? "null")" }
        return text + " value=\(event["value"]?.json ?? "null")"
    }
}
