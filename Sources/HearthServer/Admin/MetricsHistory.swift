import Foundation
import HearthCore
import Synchronization

/// The server's figures over the last hours, for the console's graphs: a bounded ring of
/// ``MetricsSample``s that ``MetricsHistoryService`` fills at a fixed interval from the start
/// of the server, so an operator who opens the Server page after an incident sees what came
/// before it. With the defaults, one sample every 10 seconds for 6 hours (2,160 samples).
///
/// Threading: a lock guards the ring, held only to store one sample or copy the ring out.
final class MetricsHistory: Sendable {
    /// How many samples are kept; the oldest go first.
    let capacity: Int
    /// The time between two samples.
    let interval: Duration
    private let ring: Mutex<BoundedRing<MetricsSample>>

    static let defaultInterval: Duration = .seconds(10)
    static let defaultCapacity = 2_160

    init(capacity: Int = MetricsHistory.defaultCapacity, interval: Duration = MetricsHistory.defaultInterval) {
        self.capacity = capacity
        ring = Mutex(BoundedRing(capacity: capacity))
        self.interval = interval
    }

    /// Keeps `sample`, dropping the oldest past ``capacity``.
    func record(_ sample: MetricsSample) {
        ring.withLock { $0.append(sample) }
    }

    /// The kept samples whose time is within `range` (milliseconds since the epoch), oldest first.
    func samples(in range: TimeFilter = TimeFilter()) -> [MetricsSample] {
        ring.withLock { $0.oldestFirst }.filter { range.contains(milliseconds: $0.time) }
    }
}
