import Synchronization
import Testing
@testable import HearthAuth

/// The gate password hashing goes through, with a stand-in workload that holds its turn until
/// the test lets it go: how many run at once, how many wait, who goes first, who is refused.
/// Tests wait for the gate's reported occupancy, never for time to pass. The time limit only
/// catches a hang: it is wide because the swift stage shares two cores with other stages, and a
/// clean-clone run once starved every test here for over a minute before it was scheduled.
@Suite(.timeLimit(.minutes(10))) struct ConcurrencyGateTests {
    /// Permits handed out by the test: a job holds its turn until it gets one.
    final class Permits: Sendable {
        private let state = Mutex<(available: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.available == 0 else {
                        state.available -= 1
                        return true
                    }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func release(_ count: Int) {
            let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                let taken = Array(state.waiters.prefix(count))
                state.waiters.removeFirst(taken.count)
                state.available += count - taken.count
                return taken
            }
            for continuation in resumed { continuation.resume() }
        }
    }

    /// A gate, the occupancies it reports, and jobs that record when they start.
    final class Harness: Sendable {
        let gate: ConcurrencyGate
        let reports: AsyncStream<ConcurrencyGate.Occupancy>
        let permits = Permits()
        let started = Mutex<[String]>([])
        let running = Mutex((now: 0, most: 0))

        init(maxRunning: Int, maxWaiting: Int) {
            let (reports, sink) = AsyncStream.makeStream(of: ConcurrencyGate.Occupancy.self)
            self.reports = reports
            gate = ConcurrencyGate(maxRunning: maxRunning, maxWaiting: maxWaiting) { sink.yield($0) }
        }

        /// A job that holds its turn until it gets a permit; its outcome is `ok` or the refusal.
        func job(_ name: String, _ priority: ConcurrencyGate.Priority = .normal) -> Task<String, Never> {
            Task {
                do {
                    try await gate.run(priority) {
                        started.withLock { $0.append(name) }
                        running.withLock { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
                        await permits.wait()
                        running.withLock { $0.now -= 1 }
                    }
                    return "ok"
                } catch {
                    return "\(error)"
                }
            }
        }
    }

    /// Reads the gate's reports until it says `running` and `waiting`.
    static func waitFor(
        running: Int, waiting: Int, in reports: inout AsyncStream<ConcurrencyGate.Occupancy>.Iterator
    ) async {
        while let report = await reports.next() {
            if report == ConcurrencyGate.Occupancy(running: running, waiting: waiting) { return }
        }
    }

    @Test func noMoreThanMaxRunningRunAndTheQueueIsBounded() async {
        let harness = Harness(maxRunning: 2, maxWaiting: 3)
        var reports = harness.reports.makeAsyncIterator()
        let jobs = (0..<5).map { harness.job("job\($0)", .urgent) }
        await Self.waitFor(running: 2, waiting: 3, in: &reports)
        #expect(harness.started.withLock { $0.count } == 2)
        // A sixth is refused at once rather than piled up.
        await #expect(throws: ConcurrencyGate.Refusal.full) { try await harness.gate.enter(.urgent) }
        await #expect(throws: ConcurrencyGate.Refusal.full) { try await harness.gate.enter(.normal) }
        #expect(harness.gate.occupancy == .init(running: 2, waiting: 3))
        harness.permits.release(5)
        var outcomes: [String] = []
        for job in jobs { outcomes.append(await job.value) }
        #expect(outcomes == Array(repeating: "ok", count: 5))
        #expect(harness.running.withLock { $0.most } == 2)
        #expect(harness.gate.occupancy == .init(running: 0, waiting: 0))
    }

    @Test func aRunningPlaceIsKeptForUrgentWork() async {
        let harness = Harness(maxRunning: 3, maxWaiting: 10)
        var reports = harness.reports.makeAsyncIterator()
        #expect(harness.gate.maxRunningNormal == 2)
        // A flood of sign-ups runs two at a time…
        let signUps = (0..<5).map { harness.job("sign-up \($0)") }
        await Self.waitFor(running: 2, waiting: 3, in: &reports)
        // …and a sign-in starts at once in the place kept for it, ahead of them all.
        let signIn = harness.job("sign-in", .urgent)
        await Self.waitFor(running: 3, waiting: 3, in: &reports)
        #expect(harness.started.withLock { $0.last } == "sign-in")
        harness.permits.release(6)
        #expect(await signIn.value == "ok")
        for job in signUps { #expect(await job.value == "ok") }
        #expect(harness.running.withLock { $0.most } == 3)
        #expect(harness.gate.occupancy == .init(running: 0, waiting: 0))
    }

    @Test func urgentWorkGoesFirstAndTakesTheNewestNormalPlaceWhenFull() async {
        let harness = Harness(maxRunning: 1, maxWaiting: 3)
        var reports = harness.reports.makeAsyncIterator()
        let holder = harness.job("holder")
        await Self.waitFor(running: 1, waiting: 0, in: &reports)
        let signUp1 = harness.job("sign-up 1")
        await Self.waitFor(running: 1, waiting: 1, in: &reports)
        let signUp2 = harness.job("sign-up 2")
        await Self.waitFor(running: 1, waiting: 2, in: &reports)
        let signIn1 = harness.job("sign-in 1", .urgent)
        await Self.waitFor(running: 1, waiting: 3, in: &reports)
        // The queue is full: a sign-in takes the newest sign-up's place, which is refused…
        let signIn2 = harness.job("sign-in 2", .urgent)
        #expect(await signUp2.value == "full")
        #expect(harness.gate.occupancy == .init(running: 1, waiting: 3))
        // …and a sign-up finds no place at all.
        await #expect(throws: ConcurrencyGate.Refusal.full) { try await harness.gate.enter(.normal) }
        harness.permits.release(4)
        #expect(await holder.value == "ok")
        #expect(await signIn1.value == "ok")
        #expect(await signIn2.value == "ok")
        #expect(await signUp1.value == "ok")
        // Sign-ins went ahead of the sign-up that came before them.
        #expect(harness.started.withLock { $0 } == ["holder", "sign-in 1", "sign-in 2", "sign-up 1"])
        #expect(harness.running.withLock { $0.most } == 1)
        #expect(harness.gate.occupancy == .init(running: 0, waiting: 0))
    }

    @Test func aCancelledWaiterLeavesTheQueue() async {
        let harness = Harness(maxRunning: 1, maxWaiting: 1)
        var reports = harness.reports.makeAsyncIterator()
        let holder = harness.job("holder")
        await Self.waitFor(running: 1, waiting: 0, in: &reports)
        let waiter = harness.job("waiter")
        await Self.waitFor(running: 1, waiting: 1, in: &reports)
        waiter.cancel()
        #expect(await waiter.value == "cancelled")
        #expect(harness.gate.occupancy == .init(running: 1, waiting: 0))
        // Its place is free again.
        let next = harness.job("next")
        await Self.waitFor(running: 1, waiting: 1, in: &reports)
        harness.permits.release(2)
        #expect(await holder.value == "ok")
        #expect(await next.value == "ok")
        #expect(harness.started.withLock { $0 } == ["holder", "next"])
        #expect(harness.gate.occupancy == .init(running: 0, waiting: 0))
    }

    @Test func workErrorsPassThroughAndFreeTheTurn() async throws {
        struct Failure: Error {}
        let gate = ConcurrencyGate(maxRunning: 1, maxWaiting: 0)
        await #expect(throws: Failure.self) { try await gate.run(.normal) { throw Failure() } }
        #expect(gate.occupancy == .init(running: 0, waiting: 0))
        #expect(try await gate.run(.urgent) { 42 } == 42)
    }
}
