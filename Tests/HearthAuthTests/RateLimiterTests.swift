import HearthTesting
import Testing
@testable import HearthAuth

/// Failure counting per key in fixed windows, driven by an injected clock, with bounded memory.
@Suite struct RateLimiterTests {
    let clock = TestClock()

    func limiter(limit: Int = 3, window: Int64 = 60_000, maxKeys: Int = 100_000) -> RateLimiter {
        RateLimiter(limit: limit, window: window, maxKeys: maxKeys) { [clock] in clock.now }
    }

    @Test func aKeyIsBlockedAfterLimitFailuresAndNotBefore() {
        let limiter = limiter(limit: 3)
        #expect(!limiter.isBlocked("a"))
        limiter.recordFailure("a")
        limiter.recordFailure("a")
        #expect(!limiter.isBlocked("a"))
        limiter.recordFailure("a")
        #expect(limiter.isBlocked("a"))
    }

    @Test func aKeyIsUnblockedWhenItsWindowPasses() {
        let limiter = limiter(limit: 2, window: 60_000)
        limiter.recordFailure("a")
        clock.advance(by: 30_000)
        limiter.recordFailure("a")
        #expect(limiter.isBlocked("a"))
        // The window started at the first failure.
        clock.advance(by: 29_999)
        #expect(limiter.isBlocked("a"))
        clock.advance(by: 1)
        #expect(!limiter.isBlocked("a"))
        // A new window counts from zero.
        limiter.recordFailure("a")
        #expect(!limiter.isBlocked("a"))
        limiter.recordFailure("a")
        #expect(limiter.isBlocked("a"))
    }

    @Test func resetForgetsAKeysFailures() {
        let limiter = limiter(limit: 2)
        limiter.recordFailure("a")
        limiter.recordFailure("a")
        #expect(limiter.isBlocked("a"))
        limiter.reset("a")
        #expect(!limiter.isBlocked("a"))
        #expect(limiter.trackedKeys == 0)
        limiter.recordFailure("a")
        #expect(!limiter.isBlocked("a"))
    }

    @Test func attemptsInProgressWaitRatherThanPassTheLimit() {
        let limiter = limiter(limit: 2)
        #expect(limiter.admit("a") == .admitted)
        #expect(limiter.admit("a") == .admitted)
        // Both attempts are still in progress: a third must wait, and waiting counts nothing.
        #expect(limiter.admit("a") == .busy)
        #expect(!limiter.isBlocked("a"))
        // A right one ends without a failure, which makes room…
        limiter.finish("a", failed: false)
        #expect(limiter.admit("a") == .admitted)
        // …and wrong ones count: two failures block the key.
        limiter.finish("a", failed: true)
        limiter.finish("a", failed: true)
        #expect(limiter.isBlocked("a"))
        #expect(limiter.admit("a") == .blocked)
        clock.advance(by: 60_000)
        #expect(limiter.admit("a") == .admitted)
        limiter.finish("a", failed: false)
        #expect(limiter.trackedKeys == 0)
    }

    @Test func keysAreCountedIndependently() {
        let limiter = limiter(limit: 2)
        limiter.recordFailure("a")
        limiter.recordFailure("a")
        limiter.recordFailure("b")
        #expect(limiter.isBlocked("a"))
        #expect(!limiter.isBlocked("b"))
        #expect(!limiter.isBlocked("c"))
        limiter.reset("a")
        limiter.recordFailure("b")
        #expect(!limiter.isBlocked("a"))
        #expect(limiter.isBlocked("b"))
    }

    @Test func memoryIsBoundedByMaxKeys() {
        let limiter = limiter(limit: 2, maxKeys: 50)
        for index in 0..<1_000 {
            limiter.recordFailure("key\(index)")
            if index % 7 == 0 { clock.advance(by: 1) }
            #expect(limiter.trackedKeys <= 50)
        }
        // The most recent keys are still tracked, so an attacker cycling keys is still counted.
        limiter.recordFailure("key999")
        #expect(limiter.isBlocked("key999"))
    }

    @Test func expiredWindowsAreForgottenFirstWhenFull() {
        let limiter = limiter(limit: 2, window: 1_000, maxKeys: 4)
        for index in 0..<4 { limiter.recordFailure("old\(index)") }
        #expect(limiter.trackedKeys == 4)
        clock.advance(by: 1_000)
        limiter.recordFailure("new")
        // Every old window is over, so all of them go and nothing live is lost.
        #expect(limiter.trackedKeys == 1)
        limiter.recordFailure("new")
        #expect(limiter.isBlocked("new"))
    }
}

/// A per-call limit below the limiter's own (an account under attack) applies to that call only.
@Suite struct RateLimiterPerCallLimitTests {
    @Test func aLowerLimitForOneAdmissionBlocksSooner() {
        let clock = TestClock()
        let limiter = RateLimiter(limit: 3, window: 60_000) { clock.now }
        #expect(limiter.admit("a", limit: 1) == .admitted)
        // The one allowed attempt is in progress: another waits.
        #expect(limiter.admit("a", limit: 1) == .busy)
        limiter.finish("a", failed: true)
        #expect(limiter.admit("a", limit: 1) == .blocked)
        // The limiter's own limit still leaves room; a higher one asked for is not given.
        #expect(limiter.admit("a") == .admitted)
        limiter.finish("a", failed: true)
        #expect(limiter.admit("a", limit: 10) == .admitted)
        limiter.finish("a", failed: true)
        #expect(limiter.admit("a", limit: 10) == .blocked)
    }
}
