import Synchronization

/// Counts failures per key (an account or a client address) in fixed windows and says when a
/// key has had too many. Memory is bounded: at most `maxKeys` keys are tracked.
public final class RateLimiter: Sendable {
    /// Failures allowed in one window.
    public let limit: Int
    /// The window length in milliseconds.
    public let window: Int64
    public let maxKeys: Int
    private let clock: @Sendable () -> Int64

    private struct Entry {
        var windowStart: Int64
        var failures: Int
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

    /// Counts one failure against `key`.
    public func recordFailure(_ key: String) {
        _ = reserve(key, evenWhenBlocked: true)
    }

    /// Counts an attempt as a failure before it is made, unless `key` has used up its
    /// failures: attempts made at once then cannot all get past the check before any of them
    /// has failed. Call ``release(_:)`` or ``reset(_:)`` when the attempt turns out well.
    /// - Returns: false, counting nothing, when `key` is blocked.
    public func reserve(_ key: String) -> Bool {
        reserve(key, evenWhenBlocked: false)
    }

    /// Takes back one attempt counted by ``reserve(_:)``.
    public func release(_ key: String) {
        let now = clock()
        entries.withLock { entries in
            guard var entry = entries[key], now - entry.windowStart < window else { return }
            entry.failures -= 1
            entries[key] = entry.failures > 0 ? entry : nil
        }
    }

    private func reserve(_ key: String, evenWhenBlocked: Bool) -> Bool {
        let now = clock()
        return entries.withLock { entries in
            if var entry = entries[key], now - entry.windowStart < window {
                guard evenWhenBlocked || entry.failures < limit else { return false }
                entry.failures += 1
                entries[key] = entry
                return true
            }
            guard limit > 0 || evenWhenBlocked else { return false }
            if entries.count >= maxKeys {
                entries = entries.filter { now - $0.value.windowStart < window }
                // Still full of live windows: forget the oldest half rather than grow.
                if entries.count >= maxKeys {
                    let kept = entries.sorted { $0.value.windowStart > $1.value.windowStart }.prefix(maxKeys / 2)
                    entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
                }
            }
            entries[key] = Entry(windowStart: now, failures: 1)
            return true
        }
    }

    /// Forgets `key`'s failures (after a successful sign-in).
    public func reset(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { entries.withLock { $0.count } }
}
