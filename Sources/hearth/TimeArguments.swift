import ArgumentParser
import Foundation
import HearthStore

/// How the command line writes spans of time and points in a database's history.
enum TimeArguments {
    /// `90s`, `30m`, `6h`, `7d` or `0` as milliseconds; nil when it is none of those.
    static func milliseconds(_ text: String) -> Int64? {
        if text == "0" { return 0 }
        let units: [Character: Int64] = ["s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        guard let last = text.last, let unit = units[last], let value = Int64(text.dropLast()), value > 0 else { return nil }
        let (milliseconds, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : milliseconds
    }

    /// A restore target: a write's sequence number (`1234`), or a time in ISO 8601
    /// (`2026-11-25T02:10:00Z`, fractions of a second and offsets allowed).
    static func target(_ text: String) throws -> DatabaseHistory.Target {
        if let sequence = Int64(text), sequence >= 0 { return .sequence(sequence) }
        if let date = date(text) { return .time(Int64((date.timeIntervalSince1970 * 1000).rounded(.down))) }
        throw ValidationError("--to takes a write's sequence number (see `hearth history`) or an ISO 8601 time such as 2026-11-25T02:10:00Z, not '\(text)'.")
    }

    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? plain.date(from: text)
    }

    /// A time as the commands print it: ISO 8601 in UTC with milliseconds.
    static func describe(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
