import Synchronization

/// What the functions did lately, for the console: the latest delivery attempts and schedule
/// runs, and the latest lines each function's process printed. Bounded: the oldest go first.
///
/// Threading: one lock, taken briefly to add and to read.
public final class FunctionActivity: Sendable {
    /// One delivery attempt or scheduled run.
    public struct Entry: Sendable, Encodable {
        public var function: String
        /// `database/<name>` for an event, `schedule` for a scheduled run, `accounts` for a
        /// blocking function's call.
        public var source: String
        public var eventID: String?
        /// `delivered`, `failed`, `unreachable`, `dead-lettered`, a run's `ok` / `failed`, or a
        /// blocking function's `ok` / `refused`.
        public var result: String
        public var reason: String?
        public var attempt: Int
        public var durationMilliseconds: Double
        /// When it happened, in milliseconds since the epoch.
        public var time: Int64

        public init(
            function: String, source: String, eventID: String?, result: String, reason: String?, attempt: Int,
            durationMilliseconds: Double, time: Int64
        ) {
            self.function = function
            self.source = source
            self.eventID = eventID
            self.result = result
            self.reason = reason
            self.attempt = attempt
            self.durationMilliseconds = durationMilliseconds
            self.time = time
        }

        /// A scheduled run of `function` (for `scheduled`, in milliseconds since the epoch).
        public static func scheduledRun(function: String, scheduled: Int64, succeeded: Bool, duration: Duration) -> Entry {
            Entry(
                function: function, source: "schedule", eventID: nil, result: succeeded ? "ok" : "failed", reason: nil, attempt: 1,
                durationMilliseconds: duration.milliseconds, time: scheduled)
        }
    }

    /// A line a function's process printed.
    public struct Line: Sendable, Encodable {
        public var function: String
        public var time: Int64
        public var text: String
    }

    public let capacity: Int
    private let entries = Mutex<[Entry]>([])
    private let lines = Mutex<[String: [Line]]>([:])

    public init(capacity: Int = 500) {
        self.capacity = max(1, capacity)
    }

    /// Keeps an entry.
    public func add(_ entry: Entry) {
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    /// Keeps a line a function's process printed.
    public func add(line text: String, function: String, time: Int64) {
        lines.withLock { lines in
            lines[function, default: []].append(Line(function: function, time: time, text: String(text.prefix(2000))))
            if let count = lines[function]?.count, count > capacity { lines[function]!.removeFirst(count - capacity) }
        }
    }

    /// The latest entries, newest last; of one function when named.
    public func recent(function: String? = nil, limit: Int = 100) -> [Entry] {
        let all = entries.withLock { $0 }
        return Array((function.map { name in all.filter { $0.function == name } } ?? all).suffix(limit))
    }

    /// The latest lines a function's process printed, newest last.
    public func recentLines(function: String, limit: Int = 200) -> [Line] {
        Array((lines.withLock { $0[function] } ?? []).suffix(limit))
    }
}

extension DeliveryLane.Attempt {
    /// `delivered`, `failed`, `unreachable` or `dead-lettered`.
    public var activityResult: String {
        switch result {
        case .delivered: "delivered"
        case .failed: deadLettered ? "dead-lettered" : "failed"
        case .unreachable: "unreachable"
        }
    }

    var activityEntry: FunctionActivity.Entry {
        let name = activityResult
        let reason: String? = switch result {
        case .delivered: nil
        case .failed(let why), .unreachable(let why): why
        }
        return FunctionActivity.Entry(
            function: function, source: source, eventID: eventID, result: name, reason: reason, attempt: attempt,
            durationMilliseconds: duration.milliseconds, time: 0)
    }
}

extension Duration {
    /// In milliseconds, with their fraction.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
