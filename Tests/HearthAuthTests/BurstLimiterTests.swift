import HearthTesting
import Testing
@testable import HearthAuth

/// A burst per key, then a steady rate, driven by an injected clock, with bounded memory.
@Suite struct BurstLimiterTests {
    let clock = TestClock()

    func limiter(burst: Int = 3, perHour: Int = 60, maxKeys: Int = 100_000) -> BurstLimiter {
        BurstLimiter(burst: burst, perHour: perHour, maxKeys: maxKeys) { [clock] in clock.now }
    }

    @Test func aBurstIsAllowedAtOnceThenOneEachInterval() {
        let limiter = limiter(burst: 3, perHour: 60)
        #expect(limiter.interval == 60_000)
        #expect(limiter.available("a") == 3)
        for _ in 0..<3 { #expect(limiter.take("a")) }
        #expect(!limiter.take("a"))
        #expect(limiter.available("a") == 0)
        // A refusal takes nothing: one interval later there is exactly one again.
        clock.advance(by: 59_999)
        #expect(!limiter.take("a"))
        clock.advance(by: 1)
        #expect(limiter.take("a"))
        #expect(!limiter.take("a"))
        // Over an hour, 60 more: the steady rate, not another burst each time.
        var allowed = 0
        for _ in 0..<3600 {
            clock.advance(by: 1000)
            if limiter.take("a") { allowed += 1 }
        }
        #expect(allowed == 60)
    }

    @Test func aQuietKeyRefillsToItsBurstAndNoMore() {
        let limiter = limiter(burst: 3, perHour: 60)
        for _ in 0..<3 { #expect(limiter.take("a")) }
        clock.advance(by: 10 * 60_000)
        #expect(limiter.available("a") == 3)
        for _ in 0..<3 { #expect(limiter.take("a")) }
        #expect(!limiter.take("a"))
    }

    @Test func keysAreCountedIndependently() {
        let limiter = limiter(burst: 1, perHour: 1)
        #expect(limiter.take("a"))
        #expect(!limiter.take("a"))
        #expect(limiter.take("b"))
    }

    @Test func memoryIsBoundedAndRefilledKeysGoFirst() {
        let limiter = limiter(burst: 2, perHour: 60, maxKeys: 10)
        for index in 0..<5 { #expect(limiter.take("old\(index)")) }
        clock.advance(by: 60_000)
        // The old keys' buckets are full again: they make room without anyone losing a count.
        for index in 0..<10 { #expect(limiter.take("new\(index)")) }
        #expect(limiter.trackedKeys <= 10)
        #expect(limiter.available("new0") == 1)
        // Past the bound, memory stays bounded.
        for index in 0..<1000 { _ = limiter.take("flood\(index)") }
        #expect(limiter.trackedKeys <= 10)
    }
}
