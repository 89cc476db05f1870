import HearthAuth
import Synchronization
import Testing

/// `AccountGate`: which accounts may still use their ID tokens, with answers kept briefly.
@Suite struct AccountGateTests {
    /// An account store stand-in: the record of each uid, and how many lookups were made.
    final class Store: Sendable {
        let records = Mutex<[String: UserRecord]>([:])
        let lookups = Atomic<Int>(0)

        func lookup(_ uid: String) -> UserRecord? {
            lookups.add(1, ordering: .relaxed)
            return records.withLock { $0[uid] }
        }

        func set(_ uid: String, disabled: Bool = false, validSince: Int64 = 0) {
            records.withLock { $0[uid] = UserRecord(uid: uid, disabled: disabled, provider: "password", createdAt: 0, validSince: validSince) }
        }
    }

    final class Clock: Sendable {
        let now = Atomic<Int64>(1_000_000)
        func advance(_ milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
    }

    @Test func disabledDeletedAndRevokedAccountsAreRefusedAndOthersNot() async {
        let store = Store()
        store.set("ann")
        store.set("bob", disabled: true)
        store.set("cat", validSince: 500)
        let gate = AccountGate(clock: { 0 }, lookup: { store.lookup($0) })
        #expect(await gate.refusal(uid: "ann", issuedAt: 100) == nil)
        #expect(await gate.refusal(uid: "bob", issuedAt: 100) == .disabled)
        #expect(await gate.refusal(uid: "nobody", issuedAt: 100) == .deleted)
        #expect(await gate.refusal(uid: "cat", issuedAt: 499) == .revoked)
        // Issued in the second the sessions were ended: still valid (token times are whole seconds).
        #expect(await gate.refusal(uid: "cat", issuedAt: 500) == nil)
    }

    @Test func theSessionThatEndedTheOthersItselfGoesOnUntilTheNextChange() async {
        let store = Store()
        store.set("dan", validSince: 500)
        let gate = AccountGate(clock: { 0 }, lookup: { store.lookup($0) })
        // Dan's device (session "phone") set a new password: his tablet's sessions end, the
        // phone's old token stays good until the phone uses the new one it was answered with.
        gate.changed(uid: "dan", continuing: ("phone", 500))
        #expect(await gate.refusal(uid: "dan", issuedAt: 400, session: "phone") == nil)
        #expect(await gate.refusal(uid: "dan", issuedAt: 400, session: "tablet") == .revoked)
        #expect(await gate.refusal(uid: "dan", issuedAt: 400) == .revoked)
        // Disabled meanwhile: nothing goes on.
        store.set("dan", disabled: true, validSince: 500)
        gate.changed(uid: "dan", continuing: ("phone", 500))
        #expect(await gate.refusal(uid: "dan", issuedAt: 400, session: "phone") == .disabled)
        // Signed out everywhere later (a new validSince), or any change told without it: the
        // phone's old token ends too.
        store.set("dan", validSince: 600)
        gate.changed(uid: "dan", continuing: ("phone", 500))
        #expect(await gate.refusal(uid: "dan", issuedAt: 400, session: "phone") == .revoked)
        store.set("dan", validSince: 500)
        gate.changed(uid: "dan")
        #expect(await gate.refusal(uid: "dan", issuedAt: 400, session: "phone") == .revoked)
    }

    @Test func answersAreKeptForTheirTimeUnlessTheAccountChangesHere() async {
        let (store, clock) = (Store(), Clock())
        store.set("ann")
        let gate = AccountGate(ttl: 2_000, clock: { clock.now.load(ordering: .relaxed) }, lookup: { store.lookup($0) })
        let told = Mutex<[String]>([])
        gate.observe { uid in told.withLock { $0.append(uid) } }
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == nil)
        // Disabled elsewhere (another process): seen once the answer is 2 s old.
        store.set("ann", disabled: true)
        clock.advance(1_999)
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == nil)
        #expect(store.lookups.load(ordering: .relaxed) == 1)
        clock.advance(1)
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == .disabled)
        // Enabled here: seen at once, and the observers are told.
        store.set("ann")
        gate.changed(uid: "ann")
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == nil)
        #expect(told.withLock { $0 } == ["ann"])
    }

    @Test func aLookupThatOverlappedAChangeIsNotKept() async throws {
        let store = Store()
        store.set("ann")
        let entered = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let slow = Atomic<Bool>(true)
        let gate = AccountGate(clock: { 0 }, lookup: { uid in
            let record = store.lookup(uid)
            // The first lookup read the store, then waits while the account changes.
            if slow.exchange(false, ordering: .relaxed) {
                entered.continuation.yield()
                for await _ in release.stream { break }
            }
            return record
        })
        let first = Task { await gate.refusal(uid: "ann", issuedAt: 1) }
        for await _ in entered.stream { break }
        store.set("ann", disabled: true)
        gate.changed(uid: "ann")
        release.continuation.yield()
        // The overlapping request gets what it read; the next one does not get it from the cache.
        #expect(await first.value == nil)
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == .disabled)
        #expect(store.lookups.load(ordering: .relaxed) == 2)
    }

    @Test func aStoreThatCannotAnswerRefusesNothing() async {
        struct Outage: Error {}
        let gate = AccountGate(clock: { 0 }, lookup: { _ in throw Outage() })
        #expect(await gate.refusal(uid: "ann", issuedAt: 1) == nil)
    }

    @Test func atMostCapacityAccountsAreKept() async {
        let store = Store()
        for index in 0..<5 { store.set("u\(index)") }
        let gate = AccountGate(capacity: 3, clock: { 0 }, lookup: { store.lookup($0) })
        for index in 0..<5 { _ = await gate.refusal(uid: "u\(index)", issuedAt: 1) }
        #expect(store.lookups.load(ordering: .relaxed) == 5)
        // Whatever was dropped is looked up again, and answers the same.
        for index in 0..<5 { #expect(await gate.refusal(uid: "u\(index)", issuedAt: 1) == nil) }
        #expect(store.lookups.load(ordering: .relaxed) > 5)
    }
}
