/// Which snapshots a database keeps so that it can be restored to any moment of its history.
///
/// The log is the history: a moment is rebuilt from the newest snapshot at or before it plus
/// the log records after that snapshot. So the oldest snapshot kept (the *base*) must be at or
/// before the start of the history window, and every log record after the base is kept.
/// Snapshots between the base and the newest are thinned to about one per quarter of the
/// window: they only shorten a restore's replay, and each costs a whole tree of disk. As time
/// passes a thinned-in snapshot falls behind the window's start and becomes the next base, so
/// the log kept stays within about 1¼ windows.
///
/// Pure logic: the caller supplies the snapshots and the time.
enum SnapshotRetention {
    /// A snapshot: the last write it includes, and when it was written (ms since the epoch).
    /// Sequence 0 stands for the empty tree before the first write.
    struct Point: Sendable, Equatable {
        var sequence: Int64
        var createdAt: Int64

        init(sequence: Int64, createdAt: Int64) {
            self.sequence = sequence
            self.createdAt = createdAt
        }
    }

    /// The sequence numbers of the snapshots to keep, oldest (the base) first.
    /// - Parameters:
    ///   - points: every snapshot, oldest first.
    ///   - now: the time, in milliseconds since the epoch.
    ///   - history: how far back the database must stay restorable, in milliseconds; zero or
    ///     less keeps only the newest snapshot (no history).
    static func kept(_ points: [Point], now: Int64, history: Int64) -> [Int64] {
        guard let newest = points.last else { return [] }
        guard history > 0 else { return [newest.sequence] }
        let windowStart = now - history
        let spacing = max(history / 4, 1)
        var kept = [newest.sequence]
        var lastKeptTime = newest.createdAt
        for point in points.dropLast().reversed() {
            if point.createdAt <= windowStart {
                // The newest snapshot at or before the window's start: everything older is
                // outside the history.
                kept.append(point.sequence)
                return kept.reversed()
            }
            if lastKeptTime - point.createdAt >= spacing {
                kept.append(point.sequence)
                lastKeptTime = point.createdAt
            }
        }
        // Nothing reaches back to the window's start: the oldest snapshot stays the base.
        if let oldest = points.first, kept.last != oldest.sequence { kept.append(oldest.sequence) }
        return kept.reversed()
    }
}
