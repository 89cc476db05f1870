import Foundation
import HearthSpawn
import HearthTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The built `hearth` executable run as a child process, the way an operator runs it.
final class HearthProcess: Sendable {
    let process: ChildProcess
    let port: Int
    /// Everything the server has printed so far.
    private let printed = Printed()
    /// Everything it has logged (standard error) so far.
    private let logged = Printed()
    /// What the server has logged to standard error so far.
    var log: String { logged.value }

    private final class Printed: Sendable {
        private let text = Mutex("")
        var value: String { text.withLock { $0 } }
        func set(_ value: String) { text.withLock { $0 = value } }
        func append(_ more: String) { text.withLock { $0 += more } }
    }

    /// The `hearth` binary next to the test bundle (SwiftPM builds it because this target
    /// depends on it), or `$HEARTH_BINARY`.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["HEARTH_BINARY"] { return URL(fileURLWithPath: path) }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On macOS the test binary sits inside a .xctest bundle.
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "MacOS" || folder.lastPathComponent == "Contents" {
            folder = folder.deletingLastPathComponent()
        }
        return folder.appendingPathComponent("hearth")
    }

    /// Runs `hearth` with `arguments` to completion and returns its exit status and output.
    ///
    /// The process is waited for on a thread of its own: the test pool has one thread per core,
    /// and a blocked one there stalls every other test in the run.
    static func run(_ arguments: [String], stdin: Data? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(arguments, stdin: stdin) })
            }.start()
        }
    }

    private static func runBlocking(_ arguments: [String], stdin: Data?) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try ChildProcess(binary, arguments: arguments, input: stdin == nil ? .discard : .pipe, output: .pipe, errors: .pipe)
        if let stdin, let input = process.input {
            input.write(stdin)
            try input.close()
        }
        // Standard error is read beside standard output, so neither pipe fills up and stalls it.
        let errors = Printed()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            errors.set(String(decoding: process.errors?.readDataToEndOfFile() ?? Data(), as: UTF8.self))
            errorsRead.signal()
        }
        let outData = process.output?.readDataToEndOfFile() ?? Data()
        errorsRead.wait()
        let exit = process.waitUntilExit()
        return (status(exit), String(decoding: outData, as: UTF8.self), errors.value)
    }

    /// A rules file that lets everyone read and write (these tests are about the process, not rules).
    static let openRules: String = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-open-\(getpid()).rules.json")
        try? Data(#"{"rules": {".read": true, ".write": true}}"#.utf8).write(to: url)
        return url.path
    }()

    /// Starts `hearth serve --port 0 --data <folder>`, with open rules unless `openRules` is
    /// false (then it runs the demo app, as by default), and waits for it to print its URL;
    /// `binary` run in `directory` (by default the built one, in this process's directory).
    init(
        data folder: URL, extraArguments: [String] = [], openRules: Bool = true, binary: URL = HearthProcess.binary,
        directory: URL? = nil
    ) throws {
        process = try ChildProcess(
            binary,
            arguments: ["serve", "--port", "0", "--data", folder.path, "--log-level", "warning"]
                + (openRules ? ["--rules", Self.openRules] : []) + extraArguments,
            directory: directory, output: .pipe, errors: .pipe)
        let out = process.output!
        let errors = process.errors!
        ChildProcess.drain(errors) { [logged] chunk in logged.append(String(decoding: chunk, as: UTF8.self)) }
        // Read until the "serving http://127.0.0.1:<port>/" line.
        var seen = ""
        let deadline = Date().addingTimeInterval(60)
        var port: Int?
        while port == nil && Date() < deadline {
            let chunk = out.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: #"http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
                let match = seen[range]
                port = Int(match.split(separator: ":").last!.dropLast())
            }
        }
        guard let port else {
            process.terminate()
            process.waitUntilExit()
            throw TestServerError("hearth serve did not start; output: \(seen)")
        }
        self.port = port
        printed.set(seen)
        // Keep draining stdout so the child never blocks on a full pipe.
        ChildProcess.drain(out) { [printed] chunk in printed.append(String(decoding: chunk, as: UTF8.self)) }
    }

    /// What the server has printed, once it contains `text` (or after `timeout`).
    func output(containing text: String, timeout: Duration = .seconds(120)) async -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let output = printed.value
            if output.contains(text) { return output }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return printed.value
    }

    /// SIGKILL: no shutdown code runs.
    func kill9() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then waits for a graceful exit; its exit status (128 + the signal's number
    /// when a signal ended it, as a shell says).
    func terminate() -> Int32 {
        process.terminate()
        return Self.status(process.waitUntilExit())
    }

    /// SIGINT (Ctrl-C), then waits; its exit status as ``terminate()`` says it.
    func interrupt() -> Int32 {
        process.signal(SIGINT)
        return Self.status(process.waitUntilExit())
    }

    static func status(_ exit: ChildProcess.Exit) -> Int32 { exit.signalled ? 128 + exit.status : exit.status }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
}
