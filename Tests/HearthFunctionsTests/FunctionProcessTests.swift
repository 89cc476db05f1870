import Foundation
@testable import HearthFunctions
import Synchronization
import Testing

/// A function's process against a stop that comes while it is about to start.
@Suite(.timeLimit(.minutes(10)))
struct FunctionProcessTests {
    @Test func aStopJustBeforeAStartKeepsTheProcessFromStarting() async throws {
        let folder = FileManager.default.temporaryDirectory
        let stopper = Mutex<FunctionProcess?>(nil)
        // The stop lands after run() saw the function running and before the process starts:
        // the process it would start is one nobody would stop, and shutdown would wait for it.
        let process = FunctionProcess(
            function: "fn", port: 1, executable: URL(fileURLWithPath: "/bin/sleep"), arguments: ["20"], folder: folder,
            environment: [:], logger: quietLogger, activity: nil, now: { 0 },
            willStart: { stopper.withLock { $0 }?.stop() })
        stopper.withLock { $0 = process }
        let started = ContinuousClock.now
        await process.run()
        #expect(process.startCount == 0)
        #expect(process.processIdentifier == nil)
        // It returned at once, not when a started process ended by itself.
        #expect(ContinuousClock.now - started < .seconds(15))
    }
}
