import Foundation
import HearthEngine
import Logging
import Synchronization

/// The latest warnings and errors the server logged, kept in memory (a bounded ring) for the
/// console's "Recent problems" and `GET /.hearth/logs`.
///
/// Threading: a lock guards the ring; recording copies a few strings.
public final class RecentLogEntries: Sendable {
    /// One logged line.
    public struct Entry: Sendable, Encodable, Equatable {
        public var time: Date
        public var level: String
        public var message: String
        public var source: String
        public var metadata: [String: String]
    }

    /// How many entries are kept.
    public let capacity: Int
    /// The lowest level kept.
    public let minimumLevel: Logger.Level
    private let entries = Mutex<[Entry]>([])

    public init(capacity: Int = 200, minimumLevel: Logger.Level = .warning) {
        self.capacity = capacity
        self.minimumLevel = minimumLevel
    }

    /// Keeps a line if it is at least ``minimumLevel``, dropping the oldest past ``capacity``.
    public func record(level: Logger.Level, message: String, metadata: Logger.Metadata, source: String, at time: Date) {
        guard level >= minimumLevel else { return }
        let entry = Entry(
            time: time, level: level.rawValue, message: message, source: source,
            metadata: metadata.mapValues { "\($0)" })
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    /// The kept entries, newest first.
    public func newestFirst() -> [Entry] {
        entries.withLock { $0.reversed() }
    }
}
