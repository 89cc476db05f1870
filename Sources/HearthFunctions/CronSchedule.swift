import Foundation

/// When a scheduled function runs: a unix-cron expression (`*/5 * * * *`, as Cloud Scheduler
/// takes it) or App Engine's plain form that Firebase also accepts (`every 5 minutes`,
/// `every day 09:00`, `every monday 09:00`), in a time zone (UTC unless given).
///
/// Pure: ``next(after:)`` computes from the calendar alone, so tests need no clock.
public struct CronSchedule: Sendable, Equatable, CustomStringConvertible {
    /// The allowed values of each field, as sorted sets.
    let minutes: [Int]
    let hours: [Int]
    let daysOfMonth: [Int]
    let months: [Int]
    /// 0 = Sunday … 6 = Saturday.
    let daysOfWeek: [Int]
    /// Cron's rule: when both day fields are restricted, a day matching either runs.
    let dayOfMonthRestricted: Bool
    let dayOfWeekRestricted: Bool
    /// For `every N minutes|hours`: an interval from the start of the day rather than fields.
    public let timeZone: TimeZone
    /// The expression as written.
    public let text: String

    public var description: String { "\(text) (\(timeZone.identifier))" }

    /// - Throws: ``FunctionError`` naming the function and what is wrong with the expression
    ///   or the time zone.
    public init(_ text: String, timeZone identifier: String?, function: String) throws {
        guard let zone = TimeZone(identifier: identifier ?? "UTC") else {
            throw FunctionError.invalidDefinition(function: function, "unknown time zone \(identifier ?? "")")
        }
        timeZone = zone
        self.text = text
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let fields: [String]
        if trimmed.hasPrefix("every ") {
            fields = try Self.appEngineFields(trimmed, function: function)
        } else {
            fields = trimmed.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        guard fields.count == 5 else {
            throw FunctionError.invalidDefinition(
                function: function, "the schedule \"\(text)\" is neither five cron fields (minute hour day month weekday) nor \"every …\"")
        }
        func parse(_ index: Int, _ range: ClosedRange<Int>, names: [String] = []) throws -> [Int] {
            do {
                return try Self.field(fields[index], range: range, names: names)
            } catch let problem as CronFieldError {
                throw FunctionError.invalidDefinition(function: function, "the schedule \"\(text)\": \(problem.reason)")
            }
        }
        minutes = try parse(0, 0...59)
        hours = try parse(1, 0...23)
        daysOfMonth = try parse(2, 1...31)
        months = try parse(3, 1...12, names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
        // 7 is Sunday too.
        daysOfWeek = Array(Set(try parse(4, 0...7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]).map { $0 % 7 })).sorted()
        dayOfMonthRestricted = fields[2] != "*"
        dayOfWeekRestricted = fields[4] != "*"
    }

    /// The first time after `date` (exclusive) the schedule fires, or nil if none in five years
    /// (`0 0 30 2 *`). Times a daylight-saving change skips are skipped.
    public func next(after date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let start = calendar.dateComponents([.year, .month, .day], from: date)
        guard var day = calendar.date(from: start) else { return nil }
        for _ in 0..<(366 * 5) {
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: day)
            if let month = parts.month, let dayOfMonth = parts.day, let weekday = parts.weekday,
                months.contains(month), matchesDay(dayOfMonth: dayOfMonth, weekday: weekday - 1)
            {
                for hour in hours {
                    for minute in minutes {
                        var wanted = parts
                        wanted.weekday = nil
                        wanted.hour = hour
                        wanted.minute = minute
                        wanted.second = 0
                        guard let candidate = calendar.date(from: wanted) else { continue }
                        // A time the clocks skip comes back as another hour: not this one.
                        guard calendar.component(.hour, from: candidate) == hour else { continue }
                        if candidate > date { return candidate }
                    }
                }
            }
            guard let following = calendar.date(byAdding: .day, value: 1, to: day) else { return nil }
            day = following
        }
        return nil
    }

    private func matchesDay(dayOfMonth: Int, weekday: Int) -> Bool {
        let byMonth = daysOfMonth.contains(dayOfMonth)
        let byWeek = daysOfWeek.contains(weekday)
        if dayOfMonthRestricted && dayOfWeekRestricted { return byMonth || byWeek }
        return byMonth && byWeek
    }

    /// One cron field: `*`, numbers, names, ranges `a-b`, steps `*/n` and `a-b/n`, lists.
    static func field(_ text: String, range: ClosedRange<Int>, names: [String]) throws -> [Int] {
        var values = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { throw CronFieldError(reason: "\"\(part)\" has more than one /") }
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), parsed > 0 else { throw CronFieldError(reason: "\"\(pieces[1])\" is not a step") }
                step = parsed
            }
            let span: ClosedRange<Int>
            if pieces[0] == "*" {
                span = range
            } else {
                let bounds = pieces[0].split(separator: "-", omittingEmptySubsequences: false)
                guard (1...2).contains(bounds.count) else { throw CronFieldError(reason: "\"\(pieces[0])\" is not a value or a range") }
                func value(_ text: Substring) throws -> Int {
                    if let number = Int(text), range.contains(number) { return number }
                    if let index = names.firstIndex(of: String(text)) { return index + (range.lowerBound == 1 ? 1 : 0) }
                    throw CronFieldError(reason: "\"\(text)\" is not in \(range.lowerBound)-\(range.upperBound)")
                }
                let low = try value(bounds[0])
                let high = bounds.count == 2 ? try value(bounds[1]) : (pieces.count == 2 ? range.upperBound : low)
                guard low <= high else { throw CronFieldError(reason: "the range \(pieces[0]) goes backwards") }
                span = low...high
            }
            values.formUnion(stride(from: span.lowerBound, through: span.upperBound, by: step))
        }
        return values.sorted()
    }

    /// App Engine's form as cron fields: `every N minutes|hours`, `every day HH:MM`,
    /// `every <weekday>[, <weekday>…] HH:MM`.
    static func appEngineFields(_ text: String, function: String) throws -> [String] {
        let words = text.split(separator: " ").map(String.init)
        func invalid() -> FunctionError {
            FunctionError.invalidDefinition(function: function, "the schedule \"\(text)\" is not one Hearth reads (try \"every 5 minutes\", \"every day 09:00\" or cron fields)")
        }
        if words.count == 3, let count = Int(words[1]), count > 0 {
            switch words[2] {
            case "minute", "minutes", "min", "mins":
                guard count < 60, 60 % count == 0 || count <= 30 else { throw invalid() }
                return ["*/\(count)", "*", "*", "*", "*"]
            case "hour", "hours":
                guard count < 24 else { throw invalid() }
                return ["0", "*/\(count)", "*", "*", "*"]
            default: throw invalid()
            }
        }
        guard words.count >= 3, let time = words.last, let colon = time.firstIndex(of: ":"),
            let hour = Int(time[..<colon]), let minute = Int(time[time.index(after: colon)...]), (0...23).contains(hour), (0...59).contains(minute)
        else { throw invalid() }
        let days = words[1..<(words.count - 1)].joined(separator: " ").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if days == ["day"] { return ["\(minute)", "\(hour)", "*", "*", "*"] }
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        let numbers = try days.map { day -> String in
            guard let index = names.firstIndex(where: { $0 == day || $0.prefix(3) == day }) else { throw invalid() }
            return String(index)
        }
        return ["\(minute)", "\(hour)", "*", "*", numbers.joined(separator: ",")]
    }
}

/// What is wrong with one cron field.
struct CronFieldError: Error {
    let reason: String
}
