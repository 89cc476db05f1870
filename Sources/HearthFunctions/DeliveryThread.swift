import AsyncHTTPClient
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The thread trigger events are delivered on, at a lower CPU priority than the server's own:
/// one NIO event loop that runs the delivery lanes' tasks (as their task executor) and the I/O
/// of the HTTP client they call functions with (``makeClient()``).
///
/// Delivery is background work: a function gets its event within milliseconds on a server
/// with a core to spare, but on a busy one, requests and writes get the cores first and
/// events wait on disk (they are already durable; the backlog's bound still applies) until
/// there is time. Without it, each write's deliveries (one HTTP request per function) compete
/// with the writes for the same cores, and a write costs what its deliveries cost.
///
/// Linux keeps a nice value per thread, so only this thread is lowered; elsewhere the process
/// keeps its priority and the thread simply runs at it.
///
/// Threading: the event loop is the one thread; ``enqueue(_:)`` may be called from anywhere.
public final class DeliveryThread: TaskExecutor, @unchecked Sendable {
    // @unchecked: both stored properties are immutable and thread-safe (NIO's group and loop).
    private let group: MultiThreadedEventLoopGroup
    private let loop: any EventLoop

    /// - Parameter niceness: added to the thread's nice value (0 leaves its priority alone).
    public init(niceness: Int32 = 10) {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        #if os(Linux)
        if niceness != 0 {
            // `who` 0 is the calling thread on Linux (nice values are per thread there).
            loop.execute { _ = setpriority(Self.thread, 0, getpriority(Self.thread, 0) + niceness) }
        }
        #endif
    }

    #if os(Linux)
    private static let thread = __priority_which_t(PRIO_PROCESS.rawValue)
    #endif

    /// The thread's nice value (as the thread sees it).
    public func niceness() async throws -> Int32 {
        #if os(Linux)
        try await loop.submit { getpriority(Self.thread, 0) }.get()
        #else
        0
        #endif
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// A client for calling functions with events (``HTTPClient/Configuration/functions``) whose
    /// I/O runs on this thread. Whoever makes it shuts it down before ``shutdown()``.
    public func makeClient() -> HTTPClient {
        HTTPClient(eventLoopGroupProvider: .shared(group), configuration: .functions)
    }

    /// Stops the thread, once nothing runs on it any more.
    public func shutdown() async throws {
        try await group.shutdownGracefully()
    }
}
