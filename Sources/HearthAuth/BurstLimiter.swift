import Synchronization

/// Allows each key (a client address) a burst of requests at once, then a steady number per
/// hour: a token bucket of ``burst`` tokens refilled one every ``interval`` milliseconds,
/// kept as the time the bucket will be full again (the generic cell rate algorithm), so each
/// key costs one number and a key whose bucket is full again is forgotten.
///
/// Memory is bounded: at most `maxKeys` keys are tracked; when full, keys whose buckets have
/// refilled go first, then those closest to refilled.
public final class BurstLimiter: Sendable {
    /// Requests allowed at once from a full bucket.
    public let burst: Int
    /// Milliseconds for one request to be allowed again (3,600,000 / requests per hour).
    public let interval: Int64
    public let maxKeys: Int
    private let clock: @Sendable () -> Int64
    /// Per key: when its bucket is full again (milliseconds since the epoch).
    private let fullAt = Mutex<[String: Int64]>([:])

    /// - Parameters:
    ///   - burst: requests allowed at once (at least 1).
    ///   - perHour: requests allowed per hour once the burst is used (at least 1).
    ///   - clock: milliseconds since the epoch.
    public init(burst: Int, perHour: Int, maxKeys: Int = 100_000, clock: @escaping @Sendable () -> Int64) {
        self.burst = max(1, burst)
        interval = 3_600_000 / Int64(max(1, perHour))
        self.maxKeys = maxKeys
        self.clock = clock
    }

    /// Takes one request from `key`'s bucket; false (and nothing taken) when it is empty.
    public func take(_ key: String) -> Bool {
        let now = clock()
        return fullAt.withLock { fullAt in
            let start = max(fullAt[key] ?? now, now)
            let next = start + interval
            // The bucket holds `burst` tokens: it may be at most that many intervals from full.
            guard next - now <= Int64(burst) * interval else { return false }
            if fullAt[key] == nil, fullAt.count >= maxKeys { makeRoom(in: &fullAt, now: now) }
            fullAt[key] = next
            return true
        }
    }

    /// How many requests `key` may make now.
    public func available(_ key: String) -> Int {
        let now = clock()
        let fullAt = fullAt.withLock { $0[key] } ?? now
        return burst - Int((max(fullAt - now, 0) + interval - 1) / interval)
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { fullAt.withLock { $0.count } }

    private func makeRoom(in fullAt: inout [String: Int64], now: Int64) {
        fullAt = fullAt.filter { $0.value > now }
        // Still full of emptied buckets: forget the half closest to full rather than grow.
        if fullAt.count >= maxKeys {
            let kept = fullAt.sorted { $0.value > $1.value }.prefix(maxKeys / 2)
            fullAt = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
    }
}
