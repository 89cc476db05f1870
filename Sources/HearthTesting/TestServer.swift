import AsyncHTTPClient
import Foundation
import HearthEngine
import HearthFunctions
import HearthServer
import HearthStore
import Logging
import ServiceLifecycle
import Synchronization

/// A real Hearth server on a loopback port with its data in a temporary folder, for tests.
///
/// ```swift
/// try await TestServer.with { server in
///     let (status, body) = try await server.request("PUT", "/a.json", body: "1")
/// }
/// ```
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The port that answers only file storage, when the configuration asked for one.
    public let filesPort: Int?
    /// The port that answers only `/metrics`, when the configuration asked for one.
    public let metricsPort: Int?
    /// The data folder.
    public let folder: DataFolder
    /// Where the data lives.
    public let directory: TemporaryDirectory
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(
        port: Int, filesPort: Int?, metricsPort: Int?, folder: DataFolder, directory: TemporaryDirectory, group: ServiceGroup,
        task: Task<Void, any Error>
    ) {
        self.port = port
        self.filesPort = filesPort
        self.metricsPort = metricsPort
        self.folder = folder
        self.directory = directory
        self.group = group
        self.task = task
    }

    /// Starts a server on a free port, runs `body`, then stops it and deletes its data.
    public static func with<T>(
        options: DatabaseOptions = DatabaseOptions(),
        maxWriteBytes: Int = 256 * 1024 * 1024,
        functions: FunctionsService? = nil,
        functionsClient: HTTPClient? = nil,
        onServices: @escaping @Sendable (ServerServices) -> Void = { _ in },
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let server = try await start(
            options: options, maxWriteBytes: maxWriteBytes, functions: functions, functionsClient: functionsClient, onServices: onServices,
            configure: configure)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Starts a server on a free port.
    /// The admin token test servers accept (as `Authorization: Bearer`); emulator mode is on
    /// as well, so `Bearer owner` works too.
    public static let adminToken = "test-admin-token"

    /// Rules that let everyone read and write: what test servers start with unless
    /// `configure` says otherwise (rules tests set their own).
    public static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    /// Storage rules that let everyone read and write every file: what test servers start
    /// with unless `configure` says otherwise.
    public static let openStorageRules = """
        rules_version = '2';
        service firebase.storage { match /b/{bucket}/o { match /{path=**} { allow read, write; } } }
        """

    /// Starts a server on a free port; `configure` may change its configuration first.
    /// - Parameters:
    ///   - functions: functions to run (their recorder is given to the databases).
    ///   - functionsClient: the client HTTPS and callable functions are called with (none: not served).
    ///   - onServices: given the server's parts once made (for Swift functions that use them).
    public static func start(
        options: DatabaseOptions = DatabaseOptions(),
        maxWriteBytes: Int = 256 * 1024 * 1024,
        functions: FunctionsService? = nil,
        functionsClient: HTTPClient? = nil,
        onServices: @escaping @Sendable (ServerServices) -> Void = { _ in },
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = try TemporaryDirectory()
        var logger = Logger(label: "hearth-test")
        logger.logLevel = .warning
        let metrics = ServerMetrics()
        var options = options
        if options.onCommit == nil { options.onCommit = metrics.committed }
        if let functions { options.eventRecorder = functions.recorder }
        let folder = try DataFolder(url: directory.url, options: options, logger: logger)
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataFolder: directory.url, maxWriteBytes: maxWriteBytes,
            adminToken: adminToken, emulator: true, defaultRules: Self.openRules
        )
        // Cheap password hashing keeps account tests quick; the format and checks are the same.
        configuration.passwordHashRounds = 1 << 10
        configuration.storageRules = Self.openStorageRules
        configure(&configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (filesPorts, filesContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (metricsPorts, metricsContinuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let app = try await buildApplication(
            configuration: configuration, folder: folder, metrics: metrics, functions: functions, functionsClient: functionsClient,
            onServices: onServices, logger: logger,
            onServerRunning: { continuation.yield($0) }, onFilesServerRunning: { filesContinuation.yield($0) },
            onMetricsServerRunning: { metricsContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw TestServerError("server did not start") }
        var filesPort: Int?
        if configuration.filesPort != nil {
            var filesIterator = filesPorts.makeAsyncIterator()
            guard let bound = await filesIterator.next() else { throw TestServerError("the files listener did not start") }
            filesPort = bound
        }
        var metricsPort: Int?
        if configuration.metricsPort != nil {
            var metricsIterator = metricsPorts.makeAsyncIterator()
            guard let bound = await metricsIterator.next() else { throw TestServerError("the metrics listener did not start") }
            metricsPort = bound
        }
        return TestServer(
            port: port, filesPort: filesPort, metricsPort: metricsPort, folder: folder, directory: directory, group: group,
            task: task)
    }

    /// Stops the server gracefully and deletes its data.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        directory.remove()
    }

    /// The server's base URL.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
}

/// A failure of the test harness itself.
public struct TestServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
