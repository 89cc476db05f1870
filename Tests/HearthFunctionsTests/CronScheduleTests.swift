import Foundation
import HearthFunctions
import Testing

/// Schedules as Firebase writes them (unix cron and App Engine's "every …"), in time zones,
/// across daylight-saving changes; and the refusals of what is not a schedule.
struct CronScheduleTests {
    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)!
    }

    static func nexts(_ schedule: CronSchedule, after start: String, count: Int) -> [String] {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = schedule.timeZone
        var times: [String] = []
        var after = date(start)
        for _ in 0..<count {
            guard let next = schedule.next(after: after) else { break }
            times.append(formatter.string(from: next))
            after = next
        }
        return times
    }

    @Test func cronFieldsStepsRangesListsAndNames() throws {
        let every5 = try CronSchedule("*/5 * * * *", timeZone: nil, function: "f")
        #expect(Self.nexts(every5, after: "2026-11-28T10:03:10Z", count: 3) == [
            "2026-11-28T10:05:00Z", "2026-11-28T10:10:00Z", "2026-11-28T10:15:00Z"])
        let weekdays = try CronSchedule("30 9 * * mon-fri", timeZone: nil, function: "f")
        // 2026-11-28 is a Saturday: the next is Monday.
        #expect(Self.nexts(weekdays, after: "2026-11-28T12:00:00Z", count: 2) == ["2026-11-30T09:30:00Z", "2026-12-01T09:30:00Z"])
        let list = try CronSchedule("0 0,12 1 jan,jul *", timeZone: nil, function: "f")
        #expect(Self.nexts(list, after: "2026-11-28T00:00:00Z", count: 3) == [
            "2027-01-01T00:00:00Z", "2027-01-01T12:00:00Z", "2027-07-01T00:00:00Z"])
        // Both day fields restricted: either one runs (cron's rule); 7 is Sunday.
        let either = try CronSchedule("0 8 1 * 7", timeZone: nil, function: "f")
        #expect(Self.nexts(either, after: "2026-11-28T12:00:00Z", count: 3) == [
            "2026-11-29T08:00:00Z", "2026-12-01T08:00:00Z", "2026-12-06T08:00:00Z"])
        #expect(try CronSchedule("0 0 30 2 *", timeZone: nil, function: "f").next(after: Self.date("2026-01-01T00:00:00Z")) == nil)
    }

    @Test func appEnginesEveryForms() throws {
        let minutes = try CronSchedule("every 15 minutes", timeZone: nil, function: "f")
        #expect(Self.nexts(minutes, after: "2026-11-28T10:14:59Z", count: 2) == ["2026-11-28T10:15:00Z", "2026-11-28T10:30:00Z"])
        let hours = try CronSchedule("every 6 hours", timeZone: nil, function: "f")
        #expect(Self.nexts(hours, after: "2026-11-28T07:00:00Z", count: 2) == ["2026-11-28T12:00:00Z", "2026-11-28T18:00:00Z"])
        let daily = try CronSchedule("every day 09:00", timeZone: "Europe/Paris", function: "f")
        #expect(Self.nexts(daily, after: "2026-11-28T12:00:00Z", count: 1) == ["2026-11-29T09:00:00+01:00"])
        let mondays = try CronSchedule("every monday, thursday 18:30", timeZone: nil, function: "f")
        #expect(Self.nexts(mondays, after: "2026-11-28T12:00:00Z", count: 2) == ["2026-11-30T18:30:00Z", "2026-12-03T18:30:00Z"])
    }

    @Test func aTimeZonesClockAcrossDaylightSavingChanges() throws {
        let early = try CronSchedule("30 2 * * *", timeZone: "Europe/Paris", function: "f")
        // 2026-03-29: Paris skips from 02:00 to 03:00, so 02:30 does not happen that day.
        #expect(Self.nexts(early, after: "2026-03-28T12:00:00Z", count: 2) == ["2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"])
        let nine = try CronSchedule("0 9 * * *", timeZone: "America/New_York", function: "f")
        #expect(Self.nexts(nine, after: "2026-11-01T00:00:00Z", count: 2) == ["2026-11-01T09:00:00-05:00", "2026-11-02T09:00:00-05:00"])
    }

    @Test(arguments: [
        ("* * * *", "neither five cron fields"),
        ("61 * * * *", "\"61\" is not in 0-59"),
        ("*/0 * * * *", "is not a step"),
        ("5-1 * * * *", "goes backwards"),
        ("* * * foo *", "\"foo\" is not in 1-12"),
        ("every fortnight", "is not one Hearth reads"),
        ("every 90 minutes", "is not one Hearth reads"),
        ("every day 25:00", "is not one Hearth reads"),
    ])
    func badSchedulesAreRefusedNamingTheFunction(text: String, reason: String) {
        #expect {
            try CronSchedule(text, timeZone: nil, function: "nightly")
        } throws: { error in
            "\(error)".contains("function nightly") && "\(error)".contains(reason)
        }
    }

    @Test func anUnknownTimeZoneIsRefused() {
        #expect(throws: FunctionError.invalidDefinition(function: "f", "unknown time zone Mars/Olympus")) {
            try CronSchedule("* * * * *", timeZone: "Mars/Olympus", function: "f")
        }
    }
}
