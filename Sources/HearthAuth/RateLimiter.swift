import Synchronization

/// Counts failures per key (an account or a client address) in fixed windows and says when a
/// key has had too many. Memory is bounded: at most `maxKeys` keys are tracked.
///
/// Attempts in progress are counted too: while a key's failures plus its attempts in
/// progress reach the limit, a new attempt must wait (``Admission/busy``), so attempts made at
/// once cannot all get past the check before any of them has failed, and right ones are
/// delayed rather than refused.
public final class RateLimiter: Sendable {
    /// Failures allowed in one window.
    public let limit: Int
    /// The window length in milliseconds.
    public let window: Int64
    public let maxKeys: Int
    private let clock: @Sendable () -> Int64

    private struct Entry {
        var windowStart: Int64
        var failures = 0
        var pending = 0
    }

    /// The answer to ``admit(_:)``.
    public enum Admission: Sendable, Equatable {
        /// Go ahead; report the outcome with ``finish(_:failed:)``.
        case admitted
        /// Too many attempts in progress to know yet: try again shortly.
        case busy
        /// The key has used up its failures for this window.
        case blocked
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// - Parameter clock: milliseconds since the epoch.
    public init(limit: Int, window: Int64, maxKeys: Int = 100_000, clock: @escaping @Sendable () -> Int64) {
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
        self.clock = clock
    }

    /// True when `key` has used up its failures for the current window.
    public func isBlocked(_ key: String) -> Bool {
        let now = clock()
        return entries.withLock { entries in
            guard let entry = entries[key], now - entry.windowStart < window else { return false }
            return entry.failures >= limit
        }
    }

    /// Starts an attempt for `key` if its failures and attempts in progress leave room.
    /// - Parameter limit: the failures allowed this time, when fewer than ``limit`` (an account
    ///   under attack allows each address fewer).
    public func admit(_ key: String, limit: Int? = nil) -> Admission {
        let now = clock()
        let limit = min(limit ?? self.limit, self.limit)
        return entries.withLock { entries in
            var entry = current(entries[key], now: now)
            if entry.failures >= limit { return .blocked }
            if entry.failures + entry.pending >= limit { return .busy }
            entry.pending += 1
            store(entry, for: key, in: &entries, now: now)
            return .admitted
        }
    }

    /// Ends an attempt started by ``admit(_:)``; a failed one counts against `key`.
    public func finish(_ key: String, failed: Bool) {
        let now = clock()
        entries.withLock { entries in
            guard var entry = entries[key] else {
                if failed { store(Entry(windowStart: now, failures: 1), for: key, in: &entries, now: now) }
                return
            }
            entry.pending = max(0, entry.pending - 1)
            if now - entry.windowStart >= window {
                // The window turned while the attempt was in progress: start a new one.
                entry.windowStart = now
                entry.failures = 0
            }
            if failed { entry.failures += 1 }
            entries[key] = entry.failures == 0 && entry.pending == 0 ? nil : entry
        }
    }

    /// Counts one failure against `key`.
    public func recordFailure(_ key: String) {
        let now = clock()
        entries.withLock { entries in
            var entry = current(entries[key], now: now)
            entry.failures += 1
            store(entry, for: key, in: &entries, now: now)
        }
    }

    /// Forgets `key`'s failures (after a successful sign-in); attempts in progress stay counted.
    public func reset(_ key: String) {
        entries.withLock { entries in
            guard var entry = entries[key] else { return }
            entry.failures = 0
            entries[key] = entry.pending == 0 ? nil : entry
        }
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { entries.withLock { $0.count } }

    private func current(_ entry: Entry?, now: Int64) -> Entry {
        guard var entry else { return Entry(windowStart: now) }
        if now - entry.windowStart >= window {
            entry.windowStart = now
            entry.failures = 0
        }
        return entry
    }

    private func store(_ entry: Entry, for key: String, in entries: inout [String: Entry], now: Int64) {
        if entries[key] == nil && entries.count >= maxKeys {
            entries = entries.filter { now - $0.value.windowStart < window || $0.value.pending > 0 }
            // Still full of live windows: forget the oldest half rather than grow.
            if entries.count >= maxKeys {
                let kept = entries.sorted { $0.value.windowStart > $1.value.windowStart }.prefix(maxKeys / 2)
                entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
        }
        entries[key] = entry
    }
}
