import HearthCore
import Testing

/// `firstWithin`: the work's answer when it comes in time; nil at the limit or when the caller
/// is cancelled, without waiting for work that ignores cancellation.
struct TimeLimitTests {
    /// Work that never finishes and ignores cancellation.
    static func stuck() async -> Int {
        let (stream, _) = AsyncStream.makeStream(of: Void.self)
        for await _ in stream {}
        return 0
    }

    @Test func theAnswerInTimeIsReturned() async {
        #expect(await firstWithin(.seconds(30)) { 42 } == 42)
    }

    @Test(.timeLimit(.minutes(10))) func stuckWorkIsLeftBehindAtTheLimit() async {
        #expect(await firstWithin(.milliseconds(50)) { await Self.stuck() } == nil)
    }

    @Test(.timeLimit(.minutes(10))) func aCancelledCallerIsNotHeldByStuckWork() async {
        let waiting = Task { await firstWithin(.seconds(3600)) { await Self.stuck() } }
        waiting.cancel()
        #expect(await waiting.value == nil)
    }
}
