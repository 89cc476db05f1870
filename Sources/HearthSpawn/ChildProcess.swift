import CSpawn
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program Hearth starts (a function's process, the Python SDK asked for its manifest, a
/// benchmark's worker, a test's server), with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux, swift-corelibs-foundation's `run()` (Swift 6.3) lists
/// `/proc/self/fd` with a struct copy that can read past the end of glibc's buffer, and so kills
/// the whole server now and then at a start (fixed upstream after 6.3). Here the child closes
/// every inherited descriptor itself (`closefrom`, glibc 2.34), starts with no signal blocked
/// and every signal at its default (a server blocks or ignores some, and its children must not
/// inherit that), and leads a process group of its own, so that a whole tree can be stopped.
///
/// Threading: the exit is waited for by a thread of its own (`waitpid`), which records the
/// status behind a lock and resumes every caller of ``exit()``; everything else may be called
/// from any thread.
public final class ChildProcess: Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// This process's own.
        case inherit
        /// `/dev/null`.
        case discard
        /// A pipe: its other end is this object's ``input``, ``output`` or ``errors``.
        case pipe
        /// For standard error only: wherever standard output goes.
        case sameAsOutput
    }

    /// How a child ended.
    public struct Exit: Sendable, Equatable, CustomStringConvertible {
        /// The exit code, or the signal's number when ``signalled``.
        public var status: Int32
        /// True when a signal ended it.
        public var signalled: Bool

        public init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }

        public var description: String { signalled ? "signal \(status)" : "status \(status)" }
    }

    /// A start that failed; says what was started and why.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The child's process ID (and its process group's, when it leads one).
    public let pid: pid_t
    /// Writes to the child's standard input (``Stream/pipe``).
    public let input: FileHandle?
    /// Reads the child's standard output (``Stream/pipe``).
    public let output: FileHandle?
    /// Reads the child's standard error (``Stream/pipe``).
    public let errors: FileHandle?
    /// Whether the child leads a process group of its own.
    public let leadsGroup: Bool

    private struct State {
        var exit: Exit?
        var waiting: [CheckedContinuation<Exit, Never>] = []
    }

    private let state = Mutex(State())
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil passes this process's on.
    ///   - directory: where it runs; nil: this process's working directory.
    ///   - ownGroup: lead a process group of its own (see ``signalGroup(_:)``).
    /// - Throws: ``SpawnError`` when it cannot be started (no such program, not executable).
    public init(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil, directory: URL? = nil,
        input inputStream: Stream = .discard, output outputStream: Stream = .inherit, errors errorStream: Stream = .inherit,
        ownGroup: Bool = true
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // This side's ends are closed in the child by closefrom, and close-on-exec besides.
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        func plumb(_ stream: Stream, into target: Int32, childReads: Bool) throws -> FileHandle? {
            switch stream {
            case .inherit:
                return nil
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", childReads ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .sameAsOutput:
                posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, target)
                return nil
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard Self.makePipe(&ends) == 0 else { throw SpawnError(description: "no pipe for \(executable.path): errno \(errno)") }
                let (childEnd, parentEnd) = childReads ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(childEnd)
                parentEnds.append(parentEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                return FileHandle(fileDescriptor: parentEnd, closeOnDealloc: true)
            }
        }
        do {
            input = try plumb(inputStream, into: STDIN_FILENO, childReads: true)
            output = try plumb(outputStream, into: STDOUT_FILENO, childReads: false)
            errors = try plumb(errorStream, into: STDERR_FILENO, childReads: false)
        } catch {
            parentEnds.forEach { close($0) }
            throw error
        }

        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        // Nothing of this process's (sockets, databases) leaks into the child. Where the C
        // library cannot, the descriptors Hearth opens are close-on-exec anyway.
        _ = cspawn_file_actions_addclosefrom(&actions, 3)
        #endif
        if ownGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        if let directory {
            let changed = cspawn_file_actions_addchdir(&actions, directory.path)
            guard changed == 0 else { throw SpawnError(description: "cannot run \(executable.path) in \(directory.path): error \(changed)") }
        }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            parentEnds.forEach { close($0) }
            throw SpawnError(description: "cannot run \(executable.path): \(String(cString: strerror(spawned)))")
        }
        pid = child
        leadsGroup = ownGroup
        Thread.detachNewThread { [self] in
            // Waited for without reaping first: until the lock below is taken, the ID stays the
            // child's, so a signal sent meanwhile never reaches a process that reused it.
            Self.waitUntilEnded(pid)
            let (exit, waiting) = state.withLock { state in
                let exit = Self.reap(pid)
                state.exit = exit
                defer { state.waiting.removeAll() }
                return (exit, state.waiting)
            }
            exited.signal()
            waiting.forEach { $0.resume(returning: exit) }
        }
    }

    /// How it ended; nil while it runs.
    public var exitStatus: Exit? { state.withLock { $0.exit } }

    /// Whether it still runs (not yet waited for).
    public var isRunning: Bool { exitStatus == nil }

    /// Waits until it ends.
    public func exit() async -> Exit {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Exit? in
                if let exit = state.exit { return exit }
                state.waiting.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Waits until it ends, blocking this thread (for threads of their own, never the
    /// concurrency pool's).
    @discardableResult
    public func waitUntilExit() -> Exit {
        if let exit = exitStatus { return exit }
        exited.wait()
        exited.signal()  // for the next caller
        return exitStatus!
    }

    /// Sends `signal` to the child, while it runs (its ID is not reused before it was waited for).
    public func signal(_ signal: Int32) {
        state.withLock { state in
            if state.exit == nil { _ = kill(pid, signal) }
        }
    }

    /// Sends `signal` to the child's whole process group (its workers too), while the child
    /// runs; the child alone when it leads no group.
    public func signalGroup(_ signal: Int32) {
        state.withLock { state in
            if state.exit == nil { _ = kill(leadsGroup ? -pid : pid, signal) }
        }
    }

    /// SIGTERM.
    public func terminate() { signal(SIGTERM) }

    /// Reads `handle` (a child's output) on a thread of its own until its end, giving each
    /// chunk to `chunk`, then calls `done`: a blocked read never holds a task's thread.
    public static func drain(
        _ handle: FileHandle, _ chunk: @escaping @Sendable (Data) -> Void, done: @escaping @Sendable () -> Void = {}
    ) {
        Thread.detachNewThread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                chunk(data)
            }
            done()
        }
    }

    /// A pipe whose ends are close-on-exec (a child gets its end by dup2 alone; spawns in other
    /// threads meanwhile close every inherited descriptor anyway).
    private static func makePipe(_ ends: inout [Int32]) -> Int32 {
        guard pipe(&ends) == 0 else { return -1 }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return 0
    }

    private static func waitUntilEnded(_ pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    private static func reap(_ pid: pid_t) -> Exit {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            // Reaped by someone else (a handler that waits for any child): nothing more to learn.
            guard errno == EINTR else { return Exit(status: -1, signalled: false) }
        }
        // WIFSIGNALED and WTERMSIG, WEXITSTATUS, written out (they are macros).
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f ? Exit(status: signal, signalled: true) : Exit(status: (status >> 8) & 0xff, signalled: false)
    }
}
