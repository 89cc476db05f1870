import HearthFunctions
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Delivery's thread: tasks that prefer it run on it, at the lower priority it was made with.
struct DeliveryThreadTests {
    #if os(Linux)
    static func currentNiceness() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test func tasksPreferringItRunOnItsThreadAtALowerPriority() async throws {
        let thread = DeliveryThread(niceness: 5)
        let before = Self.currentNiceness()
        let lowered = try await thread.niceness()
        #expect(lowered == min(19, before + 5))
        // A child task of a task that prefers the thread runs there (it sees the thread's value).
        let seen = await withTaskExecutorPreference(thread) {
            await withTaskGroup(of: Int32.self) { group in
                group.addTask { Self.currentNiceness() }
                return await group.next()!
            }
        }
        #expect(seen == lowered)
        // The rest of the process keeps its priority.
        #expect(Self.currentNiceness() == before)
        try await thread.shutdown()
    }
    #endif
}
