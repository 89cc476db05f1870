import Foundation
import HearthCore

/// The `since` and `until` query parameters the admin logs and history take: each a time as
/// milliseconds since the epoch or as ISO 8601 (`2026-11-29T15:30:00Z`, fractions allowed),
/// both inclusive.
struct TimeFilter: Sendable, Equatable {
    var since: Date?
    var until: Date?

    init(since: Date? = nil, until: Date? = nil) {
        self.since = since
        self.until = until
    }

    /// The bounds `parameters` ask for.
    /// - Throws: a Firebase-shaped `invalid_data` error naming the bad parameter, and when
    ///   `since` is after `until`.
    init(_ parameters: [String: String]) throws(HearthError) {
        since = try Self.time(parameters["since"], name: "since")
        until = try Self.time(parameters["until"], name: "until")
        if let since, let until, since > until {
            throw HearthError(.invalidData, "since must not be after until.")
        }
    }

    func contains(_ date: Date) -> Bool {
        if let since, date < since { return false }
        if let until, date > until { return false }
        return true
    }

    func contains(milliseconds: Int64) -> Bool {
        contains(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    private static func time(_ text: String?, name: String) throws(HearthError) -> Date? {
        guard let text, !text.isEmpty else { return nil }
        if let milliseconds = Int64(text), milliseconds >= 0 { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        throw HearthError(.invalidData, "\(name) must be a time: milliseconds since 1970 or ISO 8601 such as 2026-01-31T09:30:00Z.")
    }
}
