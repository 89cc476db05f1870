import Foundation
import Logging
import Synchronization

/// A process Hearth starts and keeps running for a function (one `functions-framework` per
/// function, as Firebase's emulator runs them): restarted with a growing pause when it ends,
/// stopped with the server. Its output goes to the server's log, a line at a time, under the
/// function's name.
///
/// The process leads a process group of its own (Foundation starts it so), and the whole group
/// is signalled: `functions-framework` serves through gunicorn, a master with worker processes,
/// and a worker must not outlive its master holding the port.
///
/// Threading: `run()` is one task; the running `Process` sits behind a lock so that `stop()`
/// from another task can end it.
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
    private let running = Mutex<Process?>(nil)
    private let stopped = Atomic(false)
    /// How many times it started.
    private let starts = Atomic(0)

    public init(
        function: String, port: Int, executable: URL, arguments: [String], folder: URL, environment: [String: String], logger: Logger,
        activity: FunctionActivity? = nil
    ) {
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
        while !Task.isCancelled, !stopped.load(ordering: .relaxed) {
            let started = ContinuousClock.now
            do {
                let status = try await runOnce()
                guard !Task.isCancelled, !stopped.load(ordering: .relaxed) else { break }
                logger.warning("a function's process ended; starting it again", metadata: [
                    "function": "\(function)", "status": "\(status)", "pause": "\(pause)",
                ])
            } catch {
                logger.error("a function's process could not start", metadata: ["function": "\(function)", "error": "\(error)"])
            }
            // A process that ran a while is started again soon; one that keeps dying, less often.
            if ContinuousClock.now - started > .seconds(30) { pause = .milliseconds(250) }
            do { try await Task.sleep(for: pause) } catch { break }
            pause = min(pause * 2, .seconds(30))
        }
        stop()
    }

    /// Ends the process and its workers (SIGTERM, then SIGKILL after 5 s) and keeps it from
    /// starting again.
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        guard let process = running.withLock({ $0 }), process.isRunning else { return }
        let group = -process.processIdentifier
        kill(group, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) {
            kill(group, SIGKILL)
        }
    }

    /// The running process's ID, if one runs.
    public var processIdentifier: Int32? {
        running.withLock { process in process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }
    }

    private func runOnce() async throws -> Int32 {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let lines = LineSplitter { [logger, function, activity] line in
            logger.info("\(line)", metadata: ["function": "\(function)"])
            activity?.add(line: line, function: function, time: Int64(Date().timeIntervalSince1970 * 1000))
        }
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                lines.finish()
            } else {
                lines.append(data)
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                // Its workers go with it.
                kill(-process.processIdentifier, SIGKILL)
                continuation.resume(returning: process.terminationStatus)
            }
            do {
                try running.withLock { running in
                    try process.run()
                    running = process
                }
                starts.add(1, ordering: .relaxed)
            } catch {
                output.fileHandleForReading.readabilityHandler = nil
                continuation.resume(throwing: error)
            }
        }
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
