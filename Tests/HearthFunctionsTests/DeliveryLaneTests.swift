import Foundation
@testable import HearthFunctions
import HearthOutbox
import HearthTesting
import Synchronization
import Testing

/// One function's delivery from a real SQLite outbox, with a scripted invoker and injected
/// time: commit order, delivered events leaving the outbox, retries with the policy's backoff,
/// the dead-letter list, unreachable functions waiting without giving up, concurrent windows,
/// waking an idle lane, cancellation, and what every attempt reports.
@Suite(.timeLimit(.minutes(10)))
struct DeliveryLaneTests {
    /// An invoker that answers each event with the results scripted for it, in turn (then
    /// `.delivered`), records every call, and can hold calls until several are in flight.
    final class ScriptedInvoker: EventInvoker {
        struct State {
            var scripts: [String: [DeliveryResult]]
            var calls: [String] = []
            var inFlight = 0
            var mostInFlight = 0
            var held: [CheckedContinuation<Void, Never>] = []
            /// Calls are held until this many are in flight (then all go on); 0 holds none.
            var holdUntil: Int
        }

        let state: Mutex<State>
        let calls = Collected<String>()
        /// What each call was handed.
        let bodies = Collected<[UInt8]>()
        /// The event whose first delivery lasts until its task is cancelled (then it succeeds).
        let stalling: String?
        private let stall = AsyncStream.makeStream(of: Void.self)

        init(_ scripts: [String: [DeliveryResult]] = [:], holdUntil: Int = 0, stalling: String? = nil) {
            state = Mutex(State(scripts: scripts, holdUntil: holdUntil))
            self.stalling = stalling
        }

        func deliver(_ event: StoredEvent, timeout: Duration) async -> DeliveryResult {
            let result = state.withLock { state -> DeliveryResult in
                state.calls.append(event.event.id)
                state.inFlight += 1
                state.mostInFlight = max(state.mostInFlight, state.inFlight)
                return state.scripts[event.event.id]?.isEmpty == false ? state.scripts[event.event.id]!.removeFirst() : .delivered
            }
            calls.append(event.event.id)
            bodies.append(event.event.body)
            if event.event.id == stalling, state.withLock({ $0.calls.count(where: { $0 == stalling }) }) == 1 {
                // Nothing is ever sent: the wait ends when the task is cancelled.
                for await _ in stall.stream {}
            }
            await withCheckedContinuation { continuation in
                let release = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    guard state.holdUntil > 0 else { return [continuation] }
                    state.held.append(continuation)
                    guard state.held.count >= state.holdUntil else { return [] }
                    state.holdUntil = 0
                    defer { state.held = [] }
                    return state.held
                }
                for waiting in release { waiting.resume() }
            }
            state.withLock { $0.inFlight -= 1 }
            return result
        }

        var mostInFlight: Int { state.withLock { $0.mostInFlight } }
    }

    /// The real outbox, telling the test each time the lane asked how many events wait after
    /// finding its queue empty: it does that after removing what it delivered, just before it
    /// goes idle. (It also asks as it starts and now and then while events wait: those are
    /// counted apart.)
    final class SignallingOutbox: EventOutbox {
        let inner: SQLiteOutbox
        let idle = Collected<Int>()
        /// Every answer to how many events wait, idle or not.
        let counts = Collected<Int>()
        private let lastPageEmpty = Mutex(false)

        init(_ inner: SQLiteOutbox) { self.inner = inner }

        var source: String { inner.source }
        func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent] {
            let page = try await inner.pending(for: subscriber, after: sequence, limit: limit)
            lastPageEmpty.withLock { $0 = page.isEmpty }
            return page
        }
        func remove(_ sequences: [Int64], for subscriber: String) async throws { try await inner.remove(sequences, for: subscriber) }
        func recordFailure(of sequence: Int64, for subscriber: String) async throws {
            try await inner.recordFailure(of: sequence, for: subscriber)
        }
        func deadLetter(
            _ sequence: Int64, for subscriber: String, attempts: Int, reason: String, at time: Int64, keeping limit: Int
        ) async throws -> Int {
            try await inner.deadLetter(sequence, for: subscriber, attempts: attempts, reason: reason, at: time, keeping: limit)
        }
        func retain(subscribers: Set<String>) async throws -> [String: Int] { try await inner.retain(subscribers: subscribers) }
        func deadLetters(for subscriber: String?, limit: Int) async throws -> [DeadLetter] {
            try await inner.deadLetters(for: subscriber, limit: limit)
        }
        func replay(deadLetter sequence: Int64) async throws -> StoredEvent? { try await inner.replay(deadLetter: sequence) }
        func discard(deadLetter sequence: Int64) async throws -> Bool { try await inner.discard(deadLetter: sequence) }
        func backlog() async throws -> [String: Int] { try await inner.backlog() }
        func waiting(for subscriber: String) async throws -> Int {
            let count = try await inner.waiting(for: subscriber)
            counts.append(count)
            if lastPageEmpty.withLock({ empty in defer { empty = false }; return empty }) { idle.append(count) }
            return count
        }

        /// Waits until the lane went idle for the `count`th time.
        func wentIdle(times count: Int) async {
            _ = await idle.wait(for: count)
        }
    }

    /// A lane over a fresh outbox, its injected waits and attempts recorded.
    final class Fixture {
        let store: OutboxFixture
        let outbox: SignallingOutbox
        let invoker: ScriptedInvoker
        let backlog = EventBacklog(limit: 1000)
        let sleeps: Collected<Duration>
        let attempts: Collected<DeliveryLane.Attempt>
        let lane: DeliveryLane

        /// - Parameters:
        ///   - sleep: what a wait does after it is recorded (by default, nothing).
        ///   - now: the lane's clock (by default, always 10,000).
        init(
            policy: DeliveryPolicy, invoker: ScriptedInvoker = ScriptedInvoker(),
            sleep: @escaping @Sendable (Duration) async throws -> Void = { _ in },
            now: @escaping @Sendable () -> Int64 = { 10_000 }
        ) throws {
            store = try OutboxFixture(source: "database/test")
            outbox = SignallingOutbox(store.outbox)
            self.invoker = invoker
            let sleeps = Collected<Duration>()
            let attempts = Collected<DeliveryLane.Attempt>()
            self.sleeps = sleeps
            self.attempts = attempts
            lane = DeliveryLane(
                outbox: outbox, function: "fn", invoker: invoker, policy: policy, backlog: backlog,
                envelope: EventEnvelope(naming: .init(databaseHost: "db.example.test")), environment: DeliveryLane.Environment(
                    now: now,
                    sleep: { duration in
                        sleeps.append(duration)
                        try await sleep(duration)
                    },
                    observe: { attempts.append($0) }, logger: quietLogger))
        }

        var queue: EventBacklog.Queue { EventBacklog.Queue(source: "database/test", function: "fn") }

        func record(_ ids: [String], for subscriber: String = "fn") throws {
            try store.record(ids: ids, for: subscriber)
        }

        /// Runs the lane in a task of its own (to cancel).
        func start() -> Task<Void, Never> {
            Task { [lane] in await lane.run() }
        }

        func stop(_ task: Task<Void, Never>) async {
            task.cancel()
            await task.value
        }

        func remove() { store.remove() }
    }

    @Test func eventsAreDeliveredInCommitOrderAndLeaveTheOutbox() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy())
        defer { fixture.remove() }
        try fixture.record(["e1", "e2"])
        try fixture.record(["x1"], for: "other")
        try fixture.record(["e3", "e4", "e5"])
        #expect(try await fixture.store.outbox.backlog() == ["fn": 5, "other": 1])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.invoker.calls.all == ["e1", "e2", "e3", "e4", "e5"])
        #expect(try await fixture.store.outbox.backlog() == ["other": 1])
        #expect(try await fixture.store.outbox.deadLetters(for: nil, limit: 10).isEmpty)
        #expect(fixture.sleeps.all.isEmpty)
        await fixture.stop(task)
    }

    @Test func recordedEventsReachTheFunctionAsCloudEventsAndAnUnreadableOneIsDeadLetteredAtOnce() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 5))
        defer { fixture.remove() }
        let recorded = RecordedDatabaseEvent(instance: "db", change: .created, ref: "posts/p1", authtype: "app_user", authid: "ann")
        try fixture.store.record([
            OutboxEvent(subscriber: "fn", id: "e1", body: recorded.stored(data: Array(#"{"data":null,"delta":1}"#.utf8)), time: 4_000),
            OutboxEvent(subscriber: "fn", id: "e2", body: Array(#"{"recorded":"database","instance":7}"#.utf8) + [10, 123, 125], time: 4_000),
            OutboxEvent(subscriber: "fn", id: "e3", body: Array(#"{"specversion":"1.0"}"#.utf8), time: 4_000),
        ])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.invoker.calls.all == ["e1", "e3"])
        let event = try CloudEvent(structured: try #require(fixture.invoker.bodies.all.first))
        #expect(event.id == "e1" && event.time == 4_000)
        #expect(event.type == "google.firebase.database.ref.v1.created")
        #expect(event.source == "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/db")
        #expect(event.subject == "refs/posts/p1")
        #expect(event.extensions == [
            "instance": "db", "ref": "posts/p1", "firebasedatabasehost": "db.example.test", "location": "us-central1",
            "authtype": "app_user", "authid": "ann",
        ])
        #expect(try canonicalJSON(text: String(decoding: event.data, as: UTF8.self)) == (try canonicalJSON(text: #"{"data":null,"delta":1}"#)))
        // An event kept whole (as earlier versions kept them) goes as it is.
        #expect(fixture.invoker.bodies.all.last == Array(#"{"specversion":"1.0"}"#.utf8))
        // Retrying cannot make it readable: given up on at once, without a wait.
        let dead = try await fixture.store.outbox.deadLetters(for: "fn", limit: 10)
        #expect(dead.map(\.event.id) == ["e2"])
        #expect(dead.first?.reason.contains("invalid event") == true)
        #expect(fixture.sleeps.all.isEmpty)
        await fixture.stop(task)
    }

    @Test func moreThanAPageIsDeliveredInOrder() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy())
        defer { fixture.remove() }
        let ids = (1...150).map { "e\($0)" }
        try fixture.record(ids)
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.invoker.calls.all == ids)
        #expect(try await fixture.store.outbox.backlog().isEmpty)
        await fixture.stop(task)
    }

    @Test func aFailingEventIsRetriedWithBackoffThenDeadLetteredAndTheNextDelivered() async throws {
        let invoker = ScriptedInvoker(["e1": (1...5).map { .failed("HTTP 500: try \($0)") }])
        let fixture = try Fixture(
            policy: DeliveryPolicy(maxAttempts: 5, minBackoff: .seconds(1), maxBackoff: .seconds(5)), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.sleeps.all == [.seconds(1), .seconds(2), .seconds(4), .seconds(5)])
        #expect(invoker.calls.all == ["e1", "e1", "e1", "e1", "e1", "e2"])
        let dead = try await fixture.store.outbox.deadLetters(for: "fn", limit: 10)
        try #require(dead.count == 1)
        #expect(dead[0].event.id == "e1")
        #expect(dead[0].reason == "HTTP 500: try 5")
        #expect(dead[0].failedAt == 10_000)
        // Every failure, the last (which sent it here) included.
        #expect(dead[0].attempts == 5)
        #expect(try await fixture.store.outbox.backlog().isEmpty)
        await fixture.stop(task)
    }

    @Test func aSingleAttemptPolicyDeadLettersAtOnceWithoutWaiting() async throws {
        let invoker = ScriptedInvoker(["e1": [.failed("no")]])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 1), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.sleeps.all.isEmpty)
        #expect(invoker.calls.all == ["e1", "e2"])
        let dead = try await fixture.store.outbox.deadLetters(for: "fn", limit: 10)
        #expect(dead.map(\.reason) == ["no"])
        // retry=False: the one failure is the letter's one attempt.
        #expect(dead.map(\.attempts) == [1])
        await fixture.stop(task)
    }

    @Test func aFailureRecordedBeforeARestartCountsTowardsTheLimit() async throws {
        let invoker = ScriptedInvoker(["e1": [.failed("again"), .failed("and again")]])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 3, minBackoff: .seconds(1)), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1"])
        let stored = try await fixture.store.outbox.pending(for: "fn", after: 0, limit: 1)
        try await fixture.store.outbox.recordFailure(of: stored[0].sequence, for: "fn")
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        // One failure before and two now make three: the second now gives up, after one wait
        // (the backoff after two failures).
        #expect(invoker.calls.all == ["e1", "e1"])
        #expect(fixture.sleeps.all == [.seconds(2)])
        #expect(fixture.attempts.all.map(\.attempt) == [2, 3])
        #expect(try await fixture.store.outbox.deadLetters(for: "fn", limit: 10).map(\.reason) == ["and again"])
        await fixture.stop(task)
    }

    @Test func anUnreachableFunctionIsNeverGivenUpOnAndItsWaitsStayShort() async throws {
        let invoker = ScriptedInvoker(["e1": Array(repeating: .unreachable("connection refused"), count: 20)])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 2, minBackoff: .seconds(1), maxBackoff: .seconds(60)), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(invoker.calls.all == Array(repeating: "e1", count: 21) + ["e2"])
        #expect(try await fixture.store.outbox.deadLetters(for: nil, limit: 10).isEmpty)
        #expect(try await fixture.store.outbox.backlog().isEmpty)
        let waits = fixture.sleeps.all
        #expect(waits.count == 20)
        #expect(Array(waits.prefix(4)) == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        #expect(waits.allSatisfy { $0 <= .seconds(5) })
        #expect(waits.suffix(10).allSatisfy { $0 == .seconds(5) })
        #expect(fixture.attempts.all.allSatisfy { !$0.deadLettered })
        await fixture.stop(task)
    }

    @Test func aFailureAfterUnreachableAttemptsUsesThePolicysBackoff() async throws {
        let invoker = ScriptedInvoker(["e1": [.unreachable("down"), .unreachable("down"), .failed("HTTP 503"), .unreachable("down")]])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 2, minBackoff: .seconds(3)), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        // Unreachable attempts use none of the retries: one failure, then delivered.
        #expect(fixture.sleeps.all == [.milliseconds(100), .milliseconds(200), .seconds(3), .milliseconds(100)])
        #expect(invoker.calls.all.count == 5)
        #expect(try await fixture.store.outbox.deadLetters(for: nil, limit: 10).isEmpty)
        await fixture.stop(task)
    }

    @Test func maxConcurrencyHandsOverThatManyEventsAtOnce() async throws {
        let invoker = ScriptedInvoker(holdUntil: 3)
        let fixture = try Fixture(policy: DeliveryPolicy(maxConcurrency: 3), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2", "e3", "e4", "e5"])
        let task = fixture.start()
        // Each of the first three calls is held until all three are in flight.
        await fixture.outbox.wentIdle(times: 1)
        #expect(invoker.mostInFlight == 3)
        let calls = invoker.calls.all
        #expect(Set(calls.prefix(3)) == ["e1", "e2", "e3"])
        #expect(Set(calls.suffix(2)) == ["e4", "e5"])
        #expect(try await fixture.store.outbox.backlog().isEmpty)
        await fixture.stop(task)
    }

    @Test func oneAtATimeByDefault() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy())
        defer { fixture.remove() }
        try fixture.record(["e1", "e2", "e3"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.invoker.mostInFlight == 1)
        #expect(fixture.invoker.calls.all == ["e1", "e2", "e3"])
        await fixture.stop(task)
    }

    @Test func anIdleLaneEndsWhenCancelled() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy())
        defer { fixture.remove() }
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        await fixture.stop(task)
        // Events recorded after it ended are left alone.
        try fixture.record(["late"])
        fixture.lane.wake()
        #expect(fixture.invoker.calls.all.isEmpty)
        #expect(try await fixture.store.outbox.backlog() == ["fn": 1])
    }

    @Test func aLaneWaitingToRetryEndsWhenCancelledAndKeepsTheEvent() async throws {
        let waiting = Collected<Void>()
        let invoker = ScriptedInvoker(["e1": [.failed("HTTP 502")]])
        // The wait never ends by itself (nothing is ever sent): only cancellation ends it.
        let (never, sender) = AsyncStream.makeStream(of: Void.self)
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 3), invoker: invoker) { _ in
            waiting.append(())
            for await _ in never {}
            throw CancellationError()
        }
        defer { sender.finish() }
        defer { fixture.remove() }
        try fixture.record(["e1"])
        let task = fixture.start()
        _ = await waiting.wait(for: 1)
        await fixture.stop(task)
        #expect(invoker.calls.all == ["e1"])
        let left = try await fixture.store.outbox.pending(for: "fn", after: 0, limit: 10)
        #expect(left.map(\.event.id) == ["e1"])
        #expect(left.first?.attempts == 1)
        #expect(try await fixture.store.outbox.deadLetters(for: nil, limit: 10).isEmpty)
    }

    @Test func cancelledMidPageItStillRemovesWhatItDelivered() async throws {
        let invoker = ScriptedInvoker(stalling: "e3")
        let fixture = try Fixture(policy: DeliveryPolicy(), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2", "e3", "e4"])
        let task = fixture.start()
        _ = await invoker.calls.wait(for: 3)
        await fixture.stop(task)
        // e1 and e2 were delivered before, e3 as the lane stopped; e4 was never handed over.
        #expect(invoker.calls.all == ["e1", "e2", "e3"])
        let left = try await fixture.store.outbox.pending(for: "fn", after: 0, limit: 10).map(\.event.id)
        #expect(left == ["e4"])
    }

    @Test func wakeMakesAnIdleLaneDeliverNewEvents() async throws {
        let fixture = try Fixture(policy: DeliveryPolicy())
        defer { fixture.remove() }
        try fixture.record(["e1"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(fixture.invoker.calls.all == ["e1"])
        try fixture.record(["e2", "e3"])
        fixture.lane.wake()
        await fixture.outbox.wentIdle(times: 2)
        #expect(fixture.invoker.calls.all == ["e1", "e2", "e3"])
        #expect(try await fixture.store.outbox.backlog().isEmpty)
        // Two wakes in a row are as good as one.
        try fixture.record(["e4"])
        fixture.lane.wake()
        fixture.lane.wake()
        await fixture.outbox.wentIdle(times: 3)
        #expect(fixture.invoker.calls.all == ["e1", "e2", "e3", "e4"])
        await fixture.stop(task)
    }

    @Test func observeSeesEveryAttemptWithItsNumberAndWhetherItGaveUp() async throws {
        let invoker = ScriptedInvoker([
            "e1": [.failed("first")], "e2": [.failed("a"), .failed("b")], "e3": [.unreachable("down")],
        ])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 2), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["e1", "e2", "e3"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        let seen = fixture.attempts.all
        #expect(seen.map { "\($0.eventID) #\($0.attempt)\($0.deadLettered ? " dead" : "")" } == [
            "e1 #1", "e1 #2", "e2 #1", "e2 #2 dead", "e3 #1", "e3 #2",
        ])
        #expect(seen.map(\.result) == [
            .failed("first"), .delivered, .failed("a"), .failed("b"), .unreachable("down"), .delivered,
        ])
        #expect(seen.allSatisfy { $0.function == "fn" && $0.source == "database/test" })
        // From the commit (at 4,000) to the attempt (at 10,000).
        #expect(seen.allSatisfy { $0.lag == 6_000 })
        #expect(seen.allSatisfy { $0.duration >= .zero })
        await fixture.stop(task)
    }

    @Test func aStartingLaneCountsWhatEarlierRunsLeftAgainstTheBound() async throws {
        let invoker = ScriptedInvoker(stalling: "e1")
        let fixture = try Fixture(policy: DeliveryPolicy(), invoker: invoker)
        defer { fixture.remove() }
        // Left by an earlier run: nothing in this process counted them.
        try fixture.record(["e1", "e2", "e3"])
        #expect(fixture.backlog.waiting[fixture.queue] == nil)
        let task = fixture.start()
        // The lane is held by its first event: far from an empty queue, it counted already.
        _ = await invoker.calls.wait(for: 1)
        #expect(fixture.backlog.waiting[fixture.queue] == 3)
        await fixture.stop(task)
    }

    @Test func aLaneHeldByOneEventStillCorrectsItsBacklogFromTheOutbox() async throws {
        let clock = Mutex<Int64>(10_000)
        let invoker = ScriptedInvoker(["e1": Array(repeating: .unreachable("connection refused"), count: 3)])
        let seen = Collected<Int?>()
        let backlog = Mutex<EventBacklog?>(nil)
        let sleep: @Sendable (Duration) async throws -> Void = { _ in
            guard let backlog = backlog.withLock({ $0 }) else { return }
            let queue = EventBacklog.Queue(source: "database/test", function: "fn")
            seen.append(backlog.waiting[queue])
            if seen.all.count == 1 {
                // Ten events counted by commits that then failed, and a minute passes.
                for _ in 1...10 { _ = backlog.admit(queue) }
                clock.withLock { $0 += DeliveryLane.recountInterval }
            }
        }
        let fixture = try Fixture(policy: DeliveryPolicy(), invoker: invoker, sleep: sleep, now: { clock.withLock { $0 } })
        backlog.withLock { $0 = fixture.backlog }
        defer { fixture.remove() }
        try fixture.record(["e1", "e2"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        // Set at the start (2), then, the next wait, from the outbox again: not 12.
        #expect(Array(seen.all.prefix(3)) == [2, 2, 2] as [Int?])
        #expect(fixture.outbox.counts.all == [2, 2, 0])
        #expect(fixture.backlog.waiting[fixture.queue] == 0)
        await fixture.stop(task)
    }

    @Test func theDeadLetterListKeepsTheNewestUpToItsBound() async throws {
        let invoker = ScriptedInvoker(["e1": [.failed("1")], "e2": [.failed("2")], "e3": [.failed("3")], "e4": [.failed("4")]])
        let fixture = try Fixture(policy: DeliveryPolicy(maxAttempts: 1, maxDeadLetters: 2), invoker: invoker)
        defer { fixture.remove() }
        try fixture.record(["x1"], for: "other")
        let other = try await fixture.store.outbox.pending(for: "other", after: 0, limit: 1)
        try await fixture.store.outbox.deadLetter(other[0].sequence, for: "other", attempts: 1, reason: "x", at: 1, keeping: 2)
        try fixture.record(["e1", "e2", "e3", "e4"])
        let task = fixture.start()
        await fixture.outbox.wentIdle(times: 1)
        #expect(try await fixture.store.outbox.deadLetters(for: "fn", limit: 10).map(\.event.id) == ["e3", "e4"])
        // Another function's letters are its own.
        #expect(try await fixture.store.outbox.deadLetters(for: "other", limit: 10).map(\.event.id) == ["x1"])
        #expect(try await fixture.store.outbox.backlog() == [:])
        await fixture.stop(task)
    }

    @Test func aDeadLetterPastTheBoundSaysHowManyWent() async throws {
        let store = try OutboxFixture()
        defer { store.remove() }
        try store.record(ids: ["e1", "e2", "e3"])
        let pending = try await store.outbox.pending(for: "fn", after: 0, limit: 10)
        var dropped: [Int] = []
        for event in pending {
            dropped.append(try await store.outbox.deadLetter(event.sequence, for: event.event.subscriber, attempts: 2, reason: "no", at: 1, keeping: 1))
        }
        #expect(dropped == [0, 1, 1])
        let letters = try await store.outbox.deadLetters(for: nil, limit: 10)
        #expect(letters.map(\.event.id) == ["e3"] && letters.map(\.attempts) == [2])
    }
}
