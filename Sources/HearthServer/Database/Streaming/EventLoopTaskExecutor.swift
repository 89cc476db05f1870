import HearthEngine
import NIOCore

/// Runs a task's jobs on one NIO event loop.
///
/// A stream's delivery loop prefers its connection's event loop, so waking it for an event and
/// writing the event to the socket happen on that one thread: no hop through the cooperative
/// pool and back, which dominates fan-out to thousands of streams.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
