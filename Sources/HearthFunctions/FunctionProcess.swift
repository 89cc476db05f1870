import Foundation
import HearthSpawn
import Logging
import Synchronization

/// A process Hearth starts and keeps running for a function (one `functions-framework` per
/// function, as Firebase's emulator runs them): restarted with a growing pause when it ends,
/// stopped with the server. Its output goes to the server's log, a line at a time, under the
/// function's name.
///
/// The process leads a process group of its own (``ChildProcess`` starts it so), and the whole
/// group is signalled: `functions-framework` serves through gunicorn, a master with worker processes,
/// and a worker must not outlive its master holding the port.
///
/// Threading: `run()` is one task; the running ``ChildProcess`` and whether the function was stopped
/// sit behind one lock, so that `stop()` from another task either ends the process or keeps
/// the next one from starting (a start checks under the lock `stop()` sets it under).
public final class FunctionProcess: Sendable {
    /// The function it serves.
    public let function: String
    /// Where it listens (127.0.0.1), the same across restarts.
    public let port: Int
    let executable: URL
    let arguments: [String]
    let folder: URL
    let environment: [String: String]
    let logger: Logger
    /// Where its output is also kept for the console.
    let activity: FunctionActivity?
    private struct State {
        var process: ChildProcess?
        var stopped = false
    }

    private let state = Mutex(State())
    /// How many times it started.
    private let starts = Atomic(0)
    /// Called just before each start (a test stops the function in that moment).
    let willStart: @Sendable () -> Void
    /// Milliseconds since the epoch, for the times of its output's lines.
    let now: @Sendable () -> Int64

    public convenience init(
        function: String, port: Int, executable: URL, arguments: [String], folder: URL, environment: [String: String], logger: Logger,
        activity: FunctionActivity? = nil
    ) {
        self.init(
            function: function, port: port, executable: executable, arguments: arguments, folder: folder, environment: environment,
            logger: logger, activity: activity, now: { Int64(Date().timeIntervalSince1970 * 1000) }, willStart: {})
    }

    init(
        function: String, port: Int, executable: URL, arguments: [String], folder: URL, environment: [String: String], logger: Logger,
        activity: FunctionActivity?, now: @escaping @Sendable () -> Int64, willStart: @escaping @Sendable () -> Void
    ) {
        self.now = now
        self.willStart = willStart
        self.activity = activity
        self.function = function
        self.port = port
        self.executable = executable
        self.arguments = arguments
        self.folder = folder
        self.environment = environment
        self.logger = logger
    }

    /// Where it is reached.
    public var url: String { "http://127.0.0.1:\(port)/" }

    /// How many times it was started so far.
    public var startCount: Int { starts.load(ordering: .relaxed) }

    /// Starts it and starts it again whenever it ends, until cancelled (or ``stop()``).
    public func run() async {
        var pause = Duration.milliseconds(250)
        while !isStopping {
            let started = ContinuousClock.now
            do {
                let status = try await runOnce()
                guard !isStopping else { break }
                logger.warning("a function's process ended; starting it again", metadata: [
                    "function": "\(function)", "status": "\(status)", "pause": "\(pause)",
                ])
            } catch {
                guard !isStopping else { break }
                logger.error("a function's process could not start", metadata: ["function": "\(function)", "error": "\(error)"])
            }
            // A process that ran a while is started again soon; one that keeps dying, less often.
            if ContinuousClock.now - started > .seconds(30) { pause = .milliseconds(250) }
            do { try await Task.sleep(for: pause) } catch { break }
            pause = min(pause * 2, .seconds(30))
        }
        stop()
    }

    private var isStopping: Bool { Task.isCancelled || state.withLock { $0.stopped } }

    /// Ends the process and its workers (SIGTERM, then SIGKILL after 5 s) and keeps it from
    /// starting again.
    public func stop() {
        let process = state.withLock { state in
            state.stopped = true
            return state.process
        }
        guard let process, process.isRunning else { return }
        process.signalGroup(SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
            // Once it ended, its group was killed then (see runOnce).
            process.signalGroup(SIGKILL)
        }
    }

    /// The running process's ID, if one runs.
    public var processIdentifier: Int32? {
        state.withLock { state in state.process.flatMap { $0.isRunning ? $0.pid : nil } }
    }

    private func runOnce() async throws -> ChildProcess.Exit {
        willStart()
        let process = try state.withLock { state -> ChildProcess in
            // A stop from before this never sees the process: it must not start.
            guard !state.stopped else { throw CancellationError() }
            let process = try ChildProcess(
                executable, arguments: arguments, environment: environment, directory: folder, input: .discard, output: .pipe,
                errors: .sameAsOutput)
            state.process = process
            return process
        }
        starts.add(1, ordering: .relaxed)
        let lines = LineSplitter { [logger, function, activity, now] line in
            logger.info("\(line)", metadata: ["function": "\(function)"])
            activity?.add(line: line, function: function, time: now())
        }
        // Until the process and its workers close their end.
        if let output = process.output { ChildProcess.drain(output, { lines.append($0) }, done: { lines.finish() }) }
        let exit = await process.exit()
        // Its workers go with it (the group outlives its leader while they run).
        kill(-process.pid, SIGKILL)
        return exit
    }
}

/// Cuts a process's output into lines (a line longer than 8 KB is cut there).
final class LineSplitter: Sendable {
    private let buffer = Mutex(Data())
    private let emit: @Sendable (String) -> Void

    init(emit: @escaping @Sendable (String) -> Void) {
        self.emit = emit
    }

    func append(_ data: Data) {
        let lines = buffer.withLock { buffer -> [String] in
            buffer.append(data)
            var lines: [String] = []
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                } else if buffer.count > 8192 {
                    let cut = buffer.startIndex + 8192
                    lines.append(String(decoding: buffer[buffer.startIndex..<cut], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex..<cut)
                } else {
                    break
                }
            }
            return lines
        }
        for line in lines where !line.isEmpty { emit(line) }
    }

    func finish() {
        let rest = buffer.withLock { buffer -> String in
            defer { buffer.removeAll() }
            return String(decoding: buffer, as: UTF8.self)
        }
        if !rest.isEmpty { emit(rest) }
    }
}
