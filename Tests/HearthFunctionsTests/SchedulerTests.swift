import AsyncHTTPClient
import Foundation
import HearthFunctions
import Synchronization
import Testing

/// The scheduler on an injected clock (its waits move the clock, not time), calling a loopback
/// server: times missed during a long run or a pause get one catch-up run, not one each.
@Suite(.timeLimit(.minutes(10)))
struct SchedulerTests {
    static let client = HTTPClient.makeForFunctions()
    /// 10:00:30 UTC on 14 November 2023.
    static let start = Date(timeIntervalSince1970: 1_699_956_030)

    /// Runs an every-minute function until `count` runs were seen, and returns their scheduled
    /// times as minutes after 10:00.
    /// - Parameters:
    ///   - overshoot: added to the clock by the first wait (the process was paused in it).
    ///   - firstRunLasts: added to the clock by the first run.
    func runs(_ count: Int, overshoot: TimeInterval = 0, firstRunLasts: TimeInterval = 0) async throws -> [Int] {
        let server = try await WebhookInvokerTests.LoopbackServer()
        let clock = Mutex(Self.start)
        let waits = Mutex(0)
        let scheduled = Collected<Date>()
        let scheduler = Scheduler(
            functions: [ScheduledFunction(
                name: "tick", region: "us-central1", schedule: try CronSchedule("* * * * *", timeZone: nil, function: "tick"),
                url: server.url("ok"), retryCount: 0, timeout: .seconds(10))],
            client: Self.client,
            environment: Scheduler.Environment(
                now: { clock.withLock { $0 } },
                sleep: { duration in
                    try Task.checkCancellation()
                    let first = waits.withLock { waits in
                        waits += 1
                        return waits == 1
                    }
                    let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                    clock.withLock { $0 += seconds + (first ? overshoot : 0) }
                },
                observe: { _, time, _, _ in
                    if scheduled.all.isEmpty { clock.withLock { $0 += firstRunLasts } }
                    scheduled.append(time)
                },
                logger: quietLogger))
        let task = Task { await scheduler.run() }
        let seen = await scheduled.wait(for: count)
        task.cancel()
        await task.value
        await server.stop()
        let tenOClock = Self.start.addingTimeInterval(-30)
        return seen.prefix(count).map { Int(($0.timeIntervalSince(tenOClock) / 60).rounded()) }
    }

    @Test func onTimeRunsFollowTheSchedule() async throws {
        #expect(try await runs(3) == [1, 2, 3])
    }

    @Test func aRunLongerThanSeveralIntervalsIsFollowedByOneCatchUpRun() async throws {
        // The 10:01 run ends at 10:04:30: 10:02 is run at once (for the times missed), then 10:05.
        #expect(try await runs(4, firstRunLasts: 210) == [1, 2, 5, 6])
    }

    @Test func aPauseOverManyTimesGivesOneRun() async throws {
        // Paused from 10:00:30 to 10:11: one run (for 10:01), then 10:12.
        #expect(try await runs(3, overshoot: 600) == [1, 12, 13])
    }
}
