import HearthFunctions
import Testing

/// How a function's events are retried: the backoff doubles from the minimum to the cap, and
/// settings out of range are brought into it.
struct DeliveryPolicyTests {
    @Test func backoffDoublesAfterEachFailureUpToTheCap() {
        let policy = DeliveryPolicy(minBackoff: .seconds(1), maxBackoff: .seconds(10))
        #expect((1...6).map { policy.backoff(after: $0) } == [
            .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10),
        ])
    }

    @Test func backoffBeforeAnyFailureIsTheMinimumAndAHugeCountIsTheCap() {
        let policy = DeliveryPolicy(minBackoff: .milliseconds(250), maxBackoff: .seconds(60))
        #expect(policy.backoff(after: 0) == .milliseconds(250))
        #expect(policy.backoff(after: -3) == .milliseconds(250))
        #expect(policy.backoff(after: 1_000_000) == .seconds(60))
    }

    @Test func aCapBetweenTwoDoublingsIsReachedExactly() {
        let policy = DeliveryPolicy(minBackoff: .seconds(3), maxBackoff: .seconds(5))
        #expect([policy.backoff(after: 1), policy.backoff(after: 2), policy.backoff(after: 3)] == [.seconds(3), .seconds(5), .seconds(5)])
    }

    @Test func theDefaultsAreEightAttemptsOneToSixtySecondsAndOneAtATime() {
        let policy = DeliveryPolicy()
        #expect(policy.maxAttempts == 8)
        #expect(policy.minBackoff == .seconds(1) && policy.maxBackoff == .seconds(60))
        #expect(policy.timeout == .seconds(60))
        #expect(policy.maxConcurrency == 1)
    }

    @Test(arguments: [0, -1, Int.min])
    func attemptsAndConcurrencyAreAtLeastOne(value: Int) {
        let policy = DeliveryPolicy(maxAttempts: value, maxConcurrency: value)
        #expect(policy.maxAttempts == 1)
        #expect(policy.maxConcurrency == 1)
    }

    @Test func aCapBelowTheMinimumIsRaisedToIt() {
        let policy = DeliveryPolicy(minBackoff: .seconds(30), maxBackoff: .seconds(5))
        #expect(policy.maxBackoff == .seconds(30))
        #expect(policy.backoff(after: 4) == .seconds(30))
    }

    @Test func settingsInRangeAreKept() {
        let policy = DeliveryPolicy(
            maxAttempts: 3, minBackoff: .milliseconds(10), maxBackoff: .seconds(2), timeout: .seconds(7), maxConcurrency: 4)
        #expect(policy == DeliveryPolicy(
            maxAttempts: 3, minBackoff: .milliseconds(10), maxBackoff: .seconds(2), timeout: .seconds(7), maxConcurrency: 4))
        #expect(policy.maxAttempts == 3 && policy.maxConcurrency == 4 && policy.timeout == .seconds(7))
    }
}
