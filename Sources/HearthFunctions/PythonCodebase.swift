import AsyncHTTPClient
import Foundation
import HearthSpawn
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A folder of functions written with Firebase's Python SDK (`firebase-functions` from PyPI):
/// `main.py`, and usually a `venv/` with the SDK and `functions-framework` installed, as
/// `firebase init functions` makes it.
///
/// Loaded as Firebase's tools load it: the SDK's own admin server (`python -m
/// firebase_functions.private.serving`, on `ADMIN_PORT`) is asked once for the manifest
/// (`/__/functions.yaml`) and told to quit; then each function runs in a `functions-framework`
/// process of its own (``FunctionProcess``), `cloudevent` for event functions and `http` for
/// the rest, with the environment a Firebase emulator gives functions
/// (``FunctionsEnvironment``), so `firebase_admin.initialize_app()` inside reaches this server.
public struct PythonCodebase: Sendable {
    public let folder: URL
    /// The interpreter: the folder's `venv/bin/python` when there is one.
    public let python: URL
    public let manifest: FunctionManifest

    /// True when `folder` holds a Python codebase (`main.py`).
    public static func isCodebase(_ folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("main.py").path)
    }

    /// The interpreter for `folder`: its `venv/bin/python`, else `fallback`, else `python3` on the PATH.
    public static func interpreter(for folder: URL, fallback: String?) -> URL {
        let venv = folder.appendingPathComponent("venv/bin/python")
        if FileManager.default.isExecutableFile(atPath: venv.path) { return venv }
        if let fallback { return URL(fileURLWithPath: fallback) }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: "/usr/bin/python3")
    }

    /// Loads the codebase in `folder`: asks the SDK for its manifest.
    /// - Throws: ``FunctionError`` when the SDK cannot load `main.py` (with the end of its
    ///   output), does not answer in `timeout`, or describes a function Hearth cannot run.
    public static func load(
        folder: URL, python: URL, environment: FunctionsEnvironment, client: HTTPClient, timeout: Duration = .seconds(60),
        logger: Logger
    ) async throws -> PythonCodebase {
        let port = try LoopbackPort.free()
        var variables = environment.variables(function: nil)
        variables["ADMIN_PORT"] = String(port)
        let process: ChildProcess
        do {
            process = try ChildProcess(
                python, arguments: PythonLauncher.arguments(module: "firebase_functions.private.serving"), environment: variables,
                directory: folder, input: .discard, output: .pipe, errors: .sameAsOutput)
        } catch {
            throw FunctionError.unloadable("cannot run \(python.path) for the functions in \(folder.path): \(error)")
        }
        let captured = CapturedOutput()
        if let output = process.output {
            ChildProcess.drain(output, { captured.append($0) }, done: { captured.end() })
        } else {
            captured.end()
        }
        defer {
            // It quits when asked (below); if it did not, or never got that far, it is ended.
            process.signalGroup(SIGKILL)
        }
        // Its last words (a Python traceback) may still be in the pipe: it is ended, and what it
        // printed read to the end, before they are quoted.
        func failure(_ reason: String) async -> FunctionError {
            process.signalGroup(SIGKILL)
            await captured.ended(within: .seconds(5))
            let tail = captured.tail
            return FunctionError.unloadable("the functions in \(folder.path) could not be loaded: \(reason)\(tail.isEmpty ? "" : "\n\(tail)")")
        }
        // The admin server runs main.py at every request for the manifest: ask once, when it listens.
        let deadline = ContinuousClock.now + timeout
        while !(await LoopbackPort.accepts(port)) {
            if let exit = process.exitStatus { throw await failure("the Python SDK exited (\(exit))") }
            guard ContinuousClock.now < deadline else { throw await failure("the Python SDK did not answer within \(timeout)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        let yaml: String
        do {
            let response = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/__/functions.yaml"), timeout: .seconds(Int64(timeout.components.seconds)))
            let body = try await response.body.collect(upTo: 4 << 20)
            guard response.status == .ok else { throw await failure("the SDK answered HTTP \(response.status.code) for the manifest") }
            yaml = String(buffer: body)
        } catch let error as FunctionError {
            throw error
        } catch {
            throw await failure("the manifest could not be read: \(error)")
        }
        _ = try? await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/__/quitquitquit"), timeout: .seconds(5))
        for _ in 0..<50 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        let manifest = try FunctionManifest(yaml: yaml)
        guard !manifest.endpoints.isEmpty else { throw await failure("main.py defines no functions") }
        logger.info("loaded Python functions", metadata: [
            "folder": "\(folder.path)", "functions": "\(manifest.endpoints.map(\.name).joined(separator: ", "))",
        ])
        return PythonCodebase(folder: folder, python: python, manifest: manifest)
    }

    /// One `functions-framework` process per function, each on a port of its own.
    public func processes(environment: FunctionsEnvironment, logger: Logger, activity: FunctionActivity? = nil) throws -> [FunctionProcess] {
        try manifest.endpoints.map { endpoint in
            let port = try LoopbackPort.free()
            var variables = environment.variables(function: endpoint.name)
            variables["FUNCTION_TARGET"] = endpoint.entryPoint
            variables["FUNCTION_SIGNATURE_TYPE"] = endpoint.signatureType
            variables["K_SERVICE"] = endpoint.name
            variables["PORT"] = String(port)
            variables["HOST"] = "127.0.0.1"
            variables["DEBUG"] = "False"
            variables["CLOUD_RUN_TIMEOUT_SECONDS"] = String(endpoint.timeoutSeconds)
            return FunctionProcess(
                function: endpoint.name, port: port, executable: python,
                arguments: PythonLauncher.arguments(
                    module: "functions_framework", ["--target", endpoint.entryPoint, "--signature-type", endpoint.signatureType]),
                folder: folder, environment: variables, logger: logger, activity: activity)
        }
    }

    /// The callable and HTTPS functions, answered by their processes.
    public func httpFunctions(processes: [FunctionProcess]) -> [HTTPFunction] {
        let ports = Dictionary(uniqueKeysWithValues: processes.map { ($0.function, $0) })
        return manifest.endpoints.compactMap { endpoint in
            guard let process = ports[endpoint.name] else { return nil }
            switch endpoint.kind {
            case .callable, .https:
                var isCallable = false
                if case .callable = endpoint.kind { isCallable = true }
                return HTTPFunction(
                    name: endpoint.name, region: endpoint.region, isCallable: isCallable, url: process.url,
                    timeout: .seconds(endpoint.timeoutSeconds))
            case .event, .schedule, .blocking:
                return nil
            }
        }
    }

    /// The blocking functions, asked at their processes.
    public func blockingFunctions(processes: [FunctionProcess]) -> [BlockingFunction] {
        let ports = Dictionary(uniqueKeysWithValues: processes.map { ($0.function, $0) })
        return manifest.endpoints.compactMap { endpoint in
            guard case .blocking(let trigger) = endpoint.kind, let process = ports[endpoint.name] else { return nil }
            return BlockingFunction(name: endpoint.name, trigger: trigger, runtime: .http(url: process.url, signer: nil))
        }
    }

    /// The scheduled functions, run by their processes.
    public func scheduledFunctions(processes: [FunctionProcess]) -> [ScheduledFunction] {
        let ports = Dictionary(uniqueKeysWithValues: processes.map { ($0.function, $0) })
        return manifest.endpoints.compactMap { endpoint in
            guard case .schedule(let schedule, let retryCount) = endpoint.kind, let process = ports[endpoint.name] else { return nil }
            return ScheduledFunction(
                name: endpoint.name, region: endpoint.region, schedule: schedule, url: process.url, retryCount: retryCount,
                timeout: .seconds(endpoint.timeoutSeconds))
        }
    }

    /// The event functions, delivered to their processes: retried when the manifest asks for
    /// it (`retry: true`), otherwise given up on after one failure (a function that is down
    /// still gets its events when it is back: being unreachable is not a failure).
    public func definitions(processes: [FunctionProcess], client: HTTPClient, now: @escaping @Sendable () -> Int64) -> [FunctionDefinition] {
        let ports = Dictionary(uniqueKeysWithValues: processes.map { ($0.function, $0) })
        return manifest.endpoints.compactMap { endpoint in
            guard case .event(let trigger, let retry) = endpoint.kind, let process = ports[endpoint.name] else { return nil }
            var policy = DeliveryPolicy(timeout: .seconds(endpoint.timeoutSeconds))
            policy.maxAttempts = retry ? DeliveryPolicy().maxAttempts : 1
            return FunctionDefinition(
                name: endpoint.name, trigger: trigger,
                invoker: HTTPEventInvoker(url: process.url, signer: nil, client: client, now: now), policy: policy)
        }
    }
}

/// The last lines a process printed, kept for an error message.
final class CapturedOutput: Sendable {
    private let data = Mutex(Data())
    private let ending = AsyncStream<Never>.makeStream()

    /// The output has ended (the process and its children closed it).
    func end() {
        ending.continuation.finish()
    }

    /// Returns when the output has ended, or after `limit`.
    func ended(within limit: Duration) async {
        let stream = ending.stream
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in stream {} }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    func append(_ more: Data) {
        data.withLock { data in
            data.append(more)
            if data.count > 16_384 { data.removeFirst(data.count - 16_384) }
        }
    }

    /// Up to the last 20 lines.
    var tail: String {
        let text = String(decoding: data.withLock { $0 }, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(20).joined(separator: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
