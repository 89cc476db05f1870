import ArgumentParser
import AsyncHTTPClient
import Foundation
import HearthCluster
import HearthEngine
import PostgresNIO
import HearthFiles
import HearthFunctions
import HearthRules
import HearthServer
import HearthSocial
import HearthSocialServer
import HearthStore
import HearthWeb
import Hummingbird
import Logging

/// `hearth serve`: runs the server until SIGINT or SIGTERM, then shuts down gracefully.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Hearth server (REST API) on one port, with data kept in a local folder."
    )

    @Option(name: .long, help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(name: .long, help: "The port to listen on (0 picks a free port).")
    var port: Int = 9000

    @Option(name: .long, help: "The folder that holds the data.")
    var data: String = "hearth-data"

    @Option(name: .long, help: "The database used when a request names none.")
    var database: String = "default"

    @Flag(name: .long, help: "Emulator mode: accept Firebase's test credentials (Bearer owner) as admin, for tools and tests.")
    var emulator = false

    @Option(name: .long, help: "The admin token (default: generated on first start and kept in the data folder).")
    var adminToken: String?

    @Option(name: .long, help: "A rules file for databases that have no stored rules (default: closed rules).")
    var rules: String?

    @Flag(
        inversion: .prefixedNo,
        help: """
            Run the demo social app: its rules, and demo people and posts made on first start. On for a new \
            data folder unless --rules, --storage-rules or --emulator is given.
            """)
    var demo: Bool?

    @Option(
        name: .long,
        help: """
            Serve the web app and console from this folder (Web in a checkout) instead of the copy built \
            into hearth, so edits show on the next load.
            """)
    var webRoot: String?

    @Option(
        name: .long,
        help: """
            Serve your own Firebase web app from this folder, which holds its firebase.json (the hosting \
            section: public folder, rewrites, redirects, headers, cleanUrls, trailingSlash), in place of the \
            demo app; the console stays at /console. Without it, the release deployed with \
            `hearth hosting deploy` is served, if any.
            """)
    var hosting: String?

    @Option(
        name: .customLong("sdk-dir"),
        help: """
            For the hosted app: a folder of Firebase JS SDK files served at /__/firebase/<version>/<file> \
            (<folder>/<version>/<file>, or <folder>/<file> when the folder's name ends with the version); \
            without it, those URLs redirect to Google's copy.
            """)
    var sdkDir: String?

    @Option(
        name: .long,
        help: """
            Also listen on this port for file storage only, so browsers open user files on another origin \
            than the app's (the production setup; see docs/security.md).
            """)
    var filesPort: Int?

    @Option(
        name: .long,
        help: """
            The address browsers use for files, such as https://files.example.com (a proxy in front of \
            --files-port, or a host name of its own sent to this server).
            """)
    var filesOrigin: String?

    @Option(
        name: .long,
        help: """
            A reverse proxy on another machine whose X-Forwarded-For and X-Forwarded-Proto are believed \
            (repeatable; a proxy on this machine always is).
            """)
    var trustedProxy: [String] = []

    @Option(
        name: .long,
        help: """
            Seconds a client may take to send a request's complete head (request line and headers), from \
            opening its connection; trickling header lines does not extend it.
            """)
    var headerTimeout: Double = 20

    @Option(name: .long, help: "Seconds a request body may make no progress before its connection is closed.")
    var bodyTimeout: Double = 60

    @Option(
        name: .long,
        help: """
            Seconds a kept-alive connection may wait for its next request. Event streams, long polls and \
            WebSockets, which hold a response open on purpose, are not cut off.
            """)
    var idleTimeout: Double = 75

    @Option(
        name: .long,
        help: """
            Connections one client address may hold at once (0: no cap). Trusted proxies are exempt; the \
            requests they forward count against the client named in X-Forwarded-For.
            """)
    var maxConnectionsPerAddress: Int = 256

    @Option(
        name: .long,
        help: """
            Connections the server holds at once; more are answered 503 and closed (default: the open-file \
            limit, ulimit -n, less a tenth of it, at least 128, for databases and files).
            """)
    var maxConnections: Int?

    @Option(name: .long, help: "A storage.rules file for file storage (default: closed).")
    var storageRules: String?

    @Option(name: .long, help: "The largest file accepted, in bytes (suffixes K, M and G allowed).")
    var maxFileSize: String = "5G"

    @Option(name: .long, help: "The project ID: the audience and issuer of the ID tokens Hearth signs.")
    var project: String = "hearth"

    @Option(name: .long, help: "Failed sign-ins allowed per client address in 15 minutes.")
    var signInFailuresPerAddress: Int = 100

    @Option(name: .long, help: "Sign-ups allowed per client address per hour, after a burst of 50 (admins are not limited).")
    var signUpsPerAddressPerHour: Int = 100

    @Option(name: .long, help: "Snapshot a database after this many logged writes (a snapshot shortens restarts).")
    var snapshotAfterWrites: Int = 200_000

    @Option(name: .long, help: "Keep each database restorable to any moment this far back (`hearth restore --to`): 30m, 24h, 7d, or 0 for none.")
    var history: String = "24h"

    @Option(name: .long, help: "Make an online backup this often (such as 6h or 1d) into --backup-dir (default: 1d).")
    var backupEvery: String?

    @Option(name: .long, help: "Where backups go, scheduled ones and those made from the console (default: <data folder>-backups beside it).")
    var backupDir: String?

    @Flag(name: .long, help: "Make no scheduled backups (with --backup-dir, backups are made from the console only).")
    var noBackups = false

    @Option(name: .long, help: "How many scheduled backups to keep.")
    var backupKeep: Int = 7

    @Option(name: .long, help: "Seconds between keep-alive events on streams.")
    var keepAliveSeconds: Double = 30

    @Option(
        name: .long,
        help: "A JSON settings file: the public URL, the mail server and email templates, sign-in providers (see docs/accounts.md).")
    var settings: String?

    @Option(
        name: .long,
        help: """
            Join a cluster: every node given the same PostgreSQL URL (postgres://user:password@host:port/database) \
            serves the same databases (see docs/cluster.md).
            """)
    var cluster: String?

    @Option(
        name: .long,
        help: """
            Run the functions in this folder: main.py written with Firebase's Python functions SDK \
            (each function in a functions-framework process), and the webhooks webhooks.json declares \
            (see docs/functions.md). In a cluster, every node runs them and one delivers the events.
            """)
    var functions: String?

    @Option(name: .long, help: "The Python for --functions when its folder has no venv/ (default: python3 on the PATH).")
    var functionsPython: String?

    @Option(name: .long, help: "Events that may wait for one function in one database before more are dropped (with a warning at 80%).")
    var functionBacklog = 100_000

    @Option(name: .long, help: "This node's ID in the cluster, the same across restarts (default: host name and port).")
    var nodeID: String?

    @Option(name: .long, help: "Where this node is reached, for `hearth cluster status` (default: http://<host>:<port>).")
    var nodeAddress: String?

    @Option(name: .long, help: "Seconds a node counts as alive after its last heartbeat; then another node applies its connections' onDisconnect operations.")
    var nodeLeaseSeconds: Int = 10

    @Option(name: .long, help: "Keep file content in this folder (default: files/ in the data folder); in a cluster, one every node mounts.")
    var filesDir: String?

    @Option(
        name: .long,
        help: """
            Also serve Prometheus metrics at /metrics on this port, to anyone who reaches it (keep it private; \
            without it, /metrics is on the main port for the admin token).
            """)
    var metricsPort: Int?

    @Option(name: .long, help: "The address the metrics port listens on.")
    var metricsHost: String = "127.0.0.1"

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: "Log format: text (readable lines) or json (one JSON object per line, for log collectors).")
    var logFormat: LogFormat = .text

    @Flag(name: .long, help: "Log every request at info: method, path (credentials hidden), status, time and client address.")
    var accessLog = false

    @Option(name: .long, help: "How many of the latest requests to keep for the console's request log (0 keeps none).")
    var requestLogSize = RequestLog.defaultCapacity

    @Option(name: .long, help: "Seconds between two samples of the server's figures kept for the console's graphs.")
    var metricsHistorySeconds = 10.0

    @Option(name: .long, help: "How many samples of the server's figures to keep (the default, 2160 at 10 seconds, is 6 hours).")
    var metricsHistorySize = 2_160

    @Option(name: .long, help: "Databases open at once at most; past it idle ones close early, and with none idle a request for another gets 503.")
    var maxOpenDatabases = 256

    @Option(name: .long, help: "Seconds after which a database nobody uses (no request, stream or realtime session) is closed.")
    var idleDatabaseSeconds = 600

    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard (0...100_000).contains(requestLogSize) else { throw ValidationError("--request-log-size must be between 0 and 100000.") }
        guard metricsHistorySeconds >= 0.05, metricsHistorySeconds <= 3_600 else {
            throw ValidationError("--metrics-history-seconds must be from 0.05 to 3600.")
        }
        guard (1...100_000).contains(metricsHistorySize) else { throw ValidationError("--metrics-history-size must be between 1 and 100000.") }
        guard maxOpenDatabases >= 1 else { throw ValidationError("--max-open-databases must be at least 1.") }
        guard idleDatabaseSeconds >= 1 else { throw ValidationError("--idle-database-seconds must be at least 1.") }
        guard keepAliveSeconds > 0 else { throw ValidationError("--keep-alive-seconds must be positive.") }
        for (name, seconds) in [("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout), ("--idle-timeout", idleTimeout)] {
            guard seconds > 0, seconds <= 86_400 else { throw ValidationError("\(name) must be more than 0 and at most 86400 seconds.") }
        }
        guard maxConnectionsPerAddress >= 0 else { throw ValidationError("--max-connections-per-address must be 0 or more.") }
        if let maxConnections {
            guard maxConnections > 0 else { throw ValidationError("--max-connections must be positive.") }
        }
        guard signInFailuresPerAddress > 0 else { throw ValidationError("--sign-in-failures-per-address must be positive.") }
        guard signUpsPerAddressPerHour > 0 else { throw ValidationError("--sign-ups-per-address-per-hour must be positive.") }
        guard !project.isEmpty, project.utf8.count <= 128 else { throw ValidationError("--project must be 1 to 128 characters.") }
        guard Self.byteCount(maxFileSize) != nil else {
            throw ValidationError("--max-file-size must be a positive number of bytes, such as 10485760, 10M or 5G.")
        }
        if let metricsPort {
            guard (0...65535).contains(metricsPort) else { throw ValidationError("--metrics-port must be between 0 and 65535.") }
            guard metricsPort != port || port == 0 else { throw ValidationError("--metrics-port must differ from --port.") }
        }
        guard (2...3600).contains(nodeLeaseSeconds) else { throw ValidationError("--node-lease-seconds must be 2 to 3600.") }
        guard snapshotAfterWrites > 0 else { throw ValidationError("--snapshot-after-writes must be positive.") }
        guard TimeArguments.milliseconds(history) != nil else {
            throw ValidationError("--history takes a span such as 30m, 24h or 7d, or 0 for none.")
        }
        if let backupEvery {
            guard let every = TimeArguments.milliseconds(backupEvery), every > 0 else {
                throw ValidationError("--backup-every takes a span such as 30m, 6h or 1d.")
            }
        }
        guard backupKeep > 0 else { throw ValidationError("--backup-keep must be positive.") }
        if noBackups, backupEvery != nil { throw ValidationError("--no-backups and --backup-every contradict each other.") }
        guard functionBacklog > 0 else { throw ValidationError("--function-backlog must be positive.") }
        if let filesPort {
            guard (0...65535).contains(filesPort) else { throw ValidationError("--files-port must be between 0 and 65535.") }
            guard filesPort != port || port == 0 else { throw ValidationError("--files-port must differ from --port.") }
        }
        if let filesOrigin, ServerConfiguration.normalizedOrigin(filesOrigin) == nil {
            throw ValidationError("--files-origin must be an origin such as https://files.example.com (no path).")
        }
        for address in trustedProxy where ServerConfiguration.normalizedIPAddress(address) == nil {
            throw ValidationError("--trusted-proxy \(address) is not an IP address.")
        }
        guard DataFolder.isValidDatabaseName(database) else {
            throw ValidationError("'\(database)' is not a valid database name (use a-z, 0-9 and -).")
        }
    }

    func run() async throws {
        let functionsClients = functions == nil ? nil : FunctionsClients()
        // The demo app's Web Push (see socialServerSide).
        let pushClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: WebPushSender.clientConfiguration)
        do {
            try await serve(functionsClients: functionsClients, pushClient: pushClient)
        } catch {
            await functionsClients?.shutdown()
            try? await pushClient.shutdown()
            throw error
        }
        await functionsClients?.shutdown()
        try? await pushClient.shutdown()
    }

    private func serve(functionsClients: FunctionsClients?, pushClient: HTTPClient) async throws {
        let functionsHTTP = functionsClients?.calls
        // A server holds a descriptor per connection and several per database: use all the
        // system allows (the soft limit is often 1,024 where the hard one is far higher).
        Self.raiseDescriptorLimit()
        let recentLogs = RecentLogEntries()
        var logger = Logger(label: "hearth") { [logFormat] label in
            ConsoleLogHandler(label: label, format: logFormat == .json ? .json : .text, recent: recentLogs)
        }
        logger.logLevel = accessLog ? min(logLevel, .info) : logLevel
        let dataURL = URL(fileURLWithPath: data)
        let metrics = ServerMetrics()
        var databaseOptions = DatabaseOptions(snapshotAfterWrites: snapshotAfterWrites)
        databaseOptions.history = TimeArguments.milliseconds(history)!
        databaseOptions.onCommit = metrics.committed
        // An owner's own app brings its own rules: no demo unless asked for.
        let demo = cluster == nil && settings == nil && hosting == nil ? runsDemo(in: dataURL) : (self.demo ?? false)
        // The demo app's server side: Swift functions in this process, given the server's
        // parts once it has built them.
        let social = demo ? SocialBackend() : nil
        let socialSettings: SettingsFile.Social?
        do {
            socialSettings = try settings.flatMap { try SettingsFile.read(URL(fileURLWithPath: $0)).social }
        } catch let problem as SettingsFile.Problem {
            throw ValidationError(problem.description)
        }
        let socialFunctions = try social.map {
            try socialServerSide($0, data: dataURL, settings: socialSettings, pushClient: pushClient, logger: logger)
        }
        var functionsService: FunctionsService?
        var functionsPort: Int?
        if let functions, let functionsClients {
            let port = try LoopbackPort.free()
            functionsPort = port
            functionsService = try await loadFunctions(
                from: URL(fileURLWithPath: functions, isDirectory: true), port: port, credentials: Self.functionsCredentials(in: dataURL),
                clients: functionsClients, metrics: metrics, swiftFunctions: socialFunctions, logger: logger)
        } else if let socialFunctions {
            functionsService = try swiftFunctionsService(socialFunctions, metrics: metrics, logger: logger)
        }
        databaseOptions.eventRecorder = functionsService?.recorder
        let folder: DataFolder
        do {
            folder = try DataFolder(url: dataURL, options: databaseOptions, logger: logger)
        } catch let error as StoreError {
            throw ValidationError("\(error.message). Is another `hearth serve` running?")
        }
        let rulesText = try rules.map { path in
            try Self.rulesFile(path, kind: "rules") { text in _ = try SecurityRules(parsing: text) }
        }
        let storageRulesText = try storageRules.map { path in
            try Self.rulesFile(path, kind: "storage rules") { text in _ = try StorageRules(parsing: text) }
        }
        let demoRules = demo ? (database: DemoData.databaseRules, storage: DemoData.storageRules) : nil
        var configuration = ServerConfiguration(
            host: host, port: port, dataFolder: dataURL, defaultDatabase: database,
            adminToken: adminToken, emulator: emulator, defaultRules: rulesText ?? demoRules?.database
        )
        configuration.keepAliveInterval = .milliseconds(Int64(keepAliveSeconds * 1000))
        configuration.projectID = project
        configuration.storageRules = storageRulesText ?? demoRules?.storage
        configuration.maxFileBytes = Self.byteCount(maxFileSize)!
        configuration.signInFailuresPerAddress = signInFailuresPerAddress
        configuration.signUpsPerAddressPerHour = signUpsPerAddressPerHour
        configuration.filesPort = filesPort
        configuration.filesOrigin = filesOrigin.flatMap(ServerConfiguration.normalizedOrigin)
        configuration.trustedProxies = trustedProxy.compactMap(ServerConfiguration.normalizedIPAddress)
        configuration.connectionLimits.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        configuration.connectionLimits.bodyTimeout = .milliseconds(Int64(bodyTimeout * 1000))
        configuration.connectionLimits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        configuration.connectionLimits.maxConnectionsPerAddress = maxConnectionsPerAddress == 0 ? nil : maxConnectionsPerAddress
        configuration.connectionLimits.maxConnections = maxConnections
        if let settings {
            do {
                try SettingsFile.apply(URL(fileURLWithPath: settings), to: &configuration)
            } catch let problem as SettingsFile.Problem {
                throw ValidationError(problem.description)
            }
        }
        if let sdkDir { configuration.hostingSDKFolder = URL(fileURLWithPath: sdkDir, isDirectory: true) }
        if let folder = hosting ?? configuration.hosting?.folder.path {
            do {
                configuration.hosting = try HostingSettings.load(
                    folder: URL(fileURLWithPath: folder, isDirectory: true), hostSites: configuration.hostingHosts,
                    sdkFolder: configuration.hostingSDKFolder)
            } catch {
                throw ValidationError("--hosting \(folder): \(error)")
            }
        } else if let folder = configuration.hostingSDKFolder {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--sdk-dir \(folder.path) is not a folder.")
            }
        }
        if let cluster { configuration.clusterURL = cluster }
        if let nodeID { configuration.clusterNodeID = nodeID }
        if let nodeAddress { configuration.clusterNodeAddress = nodeAddress }
        if let filesDir { configuration.filesDirectory = URL(fileURLWithPath: filesDir, isDirectory: true) }
        configuration.metricsPort = metricsPort
        configuration.functionsPort = functionsPort
        if functionsPort != nil { configuration.functionsCredentialsFile = Self.functionsCredentials(in: dataURL) }
        configuration.functionsFolder = functions.map { URL(fileURLWithPath: $0, isDirectory: true) }
        // A backup every day by default, into `<data>-backups` beside the data folder (a backup
        // inside the folder it protects would go with it); --no-backups with --backup-dir: from
        // the console only.
        if cluster == nil, !noBackups || backupDir != nil {
            configuration.backupInterval = noBackups ? nil : .milliseconds(TimeArguments.milliseconds(backupEvery ?? "1d")!)
            configuration.backupFolder = URL(
                fileURLWithPath: backupDir ?? dataURL.deletingLastPathComponent()
                    .appendingPathComponent("\(dataURL.standardizedFileURL.lastPathComponent)-backups").path, isDirectory: true)
            configuration.backupKeep = backupKeep
        }
        let shownBackups: String
        if let folder = configuration.backupFolder {
            shownBackups = configuration.backupInterval == nil
                ? "from the console only, into \(folder.path)" : "every \(backupEvery ?? "1d") into \(folder.path), keeping \(backupKeep)"
        } else {
            shownBackups = cluster == nil ? "off (--no-backups)" : "the cluster's PostgreSQL's own"
        }
        configuration.accessLog = accessLog
        configuration.requestLogSize = requestLogSize
        configuration.metricsHistoryInterval = .milliseconds(Int64((metricsHistorySeconds * 1000).rounded()))
        configuration.metricsHistorySize = metricsHistorySize
        configuration.maxOpenDatabases = maxOpenDatabases
        configuration.idleDatabaseTimeout = .seconds(idleDatabaseSeconds)
        configuration.metricsHost = metricsHost
        if let webRoot {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: webRoot, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--web-root \(webRoot) is not a folder.")
            }
            configuration.webFiles = WebFiles(folder: URL(fileURLWithPath: webRoot, isDirectory: true))
        } else {
            configuration.webFiles = WebFiles(files: HearthWeb.files())
        }
        if let url = configuration.clusterURL {
            try await serveInCluster(
                url: url, configuration: configuration, folder: folder, options: databaseOptions, metrics: metrics,
                recentLogs: recentLogs, functions: functionsService, functionsClient: functionsHTTP, logger: logger)
            return
        }
        if configuration.adminToken == nil { configuration.adminToken = try AdminToken.loadOrCreate(in: dataURL) }
        let started = ContinuousClock.now
        _ = try folder.database(named: database)
        let loadTime = ContinuousClock.now - started
        let seedLogger = logger
        let shownFilesOrigin = configuration.filesOrigin
        // The lines line up: "The social app:   …", "Your app:         …".
        let appName = configuration.hosting == nil ? "The social app:  " : "Your app:        "
        let app = try await buildApplication(
            configuration: configuration, folder: folder, metrics: metrics, recentLogs: recentLogs, functions: functionsService,
            functionsClient: functionsHTTP,
            onServices: { [started = socialFunctions?.started, logger] services in
                social?.connect(SocialBackend.Parts(
                    data: DatabaseSocialData(provider: services.databases, name: services.defaultDatabase),
                    files: FileStoreSocialFiles(store: services.files), accounts: AuthServiceSocialAccounts(service: services.accounts)))
                if let started {
                    Task {
                        do { try await started() } catch { logger.error("the social app's server side could not start", metadata: ["error": "\(error)"]) }
                    }
                }
            },
            logger: logger,
            onServerRunning: { boundPort in
                // Unbuffered, so a supervisor reading a pipe sees the line at once.
                FileHandle.standardOutput.write(Data("""
                    Hearth is serving http://\(host):\(boundPort)/ (data in \(dataURL.path), loaded in \(loadTime))
                      \(appName) http://\(host):\(boundPort)/
                      The data console: http://\(host):\(boundPort)/console (sign in with the admin token in \(dataURL.path)/admin-token)
                      The REST API:     curl http://\(host):\(boundPort)/.json?auth=<admin token>
                      Backups:          \(shownBackups)

                    """.utf8))
                if demo {
                    // Not awaited here: the seeding talks to this very server, which is still starting.
                    let local = host == "0.0.0.0" ? "127.0.0.1" : host
                    let server = URL(string: "http://\(local):\(boundPort)")!
                    Task { await Seed.demoAccounts(in: dataURL, server: server, logger: seedLogger) }
                }
            },
            onFilesServerRunning: { filesPort in
                let origin = shownFilesOrigin.map { "\($0) (port \(filesPort))" } ?? "http://\(host):\(filesPort)"
                FileHandle.standardOutput.write(Data("  User files:       \(origin), file storage only\n".utf8))
            },
            onMetricsServerRunning: { [metricsHost] metricsPort in
                FileHandle.standardOutput.write(Data("  Metrics:          http://\(metricsHost):\(metricsPort)/metrics (Prometheus)\n".utf8))
            })
        try await app.runService()
    }
}

extension Serve {
    /// Runs as a node of the cluster at `url`: joins it, loads the default database from it,
    /// then serves until SIGINT or SIGTERM.
    func serveInCluster(
        url: String, configuration: ServerConfiguration, folder: DataFolder, options: DatabaseOptions, metrics: ServerMetrics,
        recentLogs: RecentLogEntries, functions: FunctionsService?, functionsClient: HTTPClient?, logger: Logger
    ) async throws {
        var configuration = configuration
        let clientConfiguration: PostgresClient.Configuration
        do {
            clientConfiguration = try ClusterNode.clientConfiguration(url: url)
        } catch let error as ClusterURLError {
            throw ValidationError(error.description)
        }
        let local = host == "0.0.0.0" || host == "::" ? ProcessInfo.processInfo.hostName : host
        // Port 0 picks a port only when listening: such a node gets an ID of its own each start.
        let defaultID = port == 0 ? "\(ProcessInfo.processInfo.hostName)-\(UInt32.random(in: .min ... .max))" : "\(ProcessInfo.processInfo.hostName)-\(port)"
        var nodeSettings = ClusterNode.Settings(
            id: configuration.clusterNodeID ?? defaultID, address: configuration.clusterNodeAddress ?? "http://\(local):\(port)")
        nodeSettings.leaseSeconds = nodeLeaseSeconds
        nodeSettings.heartbeatInterval = .milliseconds(Int64(nodeLeaseSeconds) * 1000 / 4)
        let node = ClusterNode(
            client: PostgresClient(configuration: clientConfiguration, backgroundLogger: logger), settings: nodeSettings,
            options: options, accountEvents: functions?.accountRecorder, fileEvents: functions?.storageRecorder, logger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await node.runClient() }
            let started = ContinuousClock.now
            do {
                try await node.prepare()
                _ = try await node.databases.database(named: database)
                if configuration.adminToken == nil {
                    // One token for the whole cluster, made by the first node that starts.
                    let made = AdminToken.make()
                    let token = try await node.secrets.loadOrCreate(name: "admin-token") { made }
                    if token == made {
                        FileHandle.standardOutput.write(Data("""
                            Created the cluster's admin token (kept in PostgreSQL; shown only this once, \
                            `hearth cluster admin-token` shows it again):
                              \(token)

                            """.utf8))
                    }
                    configuration.adminToken = token
                }
            } catch {
                throw ValidationError("cannot join the cluster at \(ClusterURLError(text: url, problem: "").shownURL): \(String(reflecting: error))")
            }
            let loadTime = ContinuousClock.now - started
            let shownSettings = nodeSettings
            let app = try await buildApplication(
                configuration: configuration, folder: folder, cluster: node, metrics: metrics, recentLogs: recentLogs,
                functions: functions, functionsClient: functionsClient, logger: logger,
                onServerRunning: { boundPort in
                    FileHandle.standardOutput.write(Data("""
                        Hearth is serving http://\(host):\(boundPort)/ as node \(shownSettings.id) of the cluster \
                        (database \(database) loaded in \(loadTime))

                        """.utf8))
                })
            try await app.runService()
            group.cancelAll()
        }
    }

    /// Where the server writes its functions' service-account key: beside the accounts and the
    /// signing key, in the data folder's owner-only `auth/` (see `FunctionsCredentials`).
    static func functionsCredentials(in data: URL) -> URL {
        data.appendingPathComponent("auth/functions-service-account.json")
    }

    /// The functions in `folder`: the Python functions of its `main.py` and the webhooks its
    /// `webhooks.json` declares.
    func loadFunctions(
        from folder: URL, port functionsPort: Int, credentials: URL, clients: FunctionsClients, metrics: ServerMetrics,
        swiftFunctions: SwiftFunctions? = nil, logger: Logger
    ) async throws -> FunctionsService {
        let http = clients.calls
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("--functions \(folder.path) is not a folder.")
        }
        let clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
        let activity = FunctionActivity()
        var definitions = swiftFunctions?.events ?? []
        var processes: [FunctionProcess] = []
        var httpFunctions: [HTTPFunction] = []
        var scheduled = swiftFunctions?.scheduled ?? []
        var blocking: [BlockingFunction] = []
        let webhooks = folder.appendingPathComponent("webhooks.json")
        do {
            if PythonCodebase.isCodebase(folder) {
                var environment = FunctionsEnvironment(
                    projectID: project, port: functionsPort, defaultDatabase: database, storageBucket: "\(project).appspot.com",
                    inherited: ProcessInfo.processInfo.environment)
                environment.credentialsFile = credentials.path
                let codebase = try await PythonCodebase.load(
                    folder: folder, python: PythonCodebase.interpreter(for: folder, fallback: functionsPython), environment: environment,
                    client: http, logger: logger)
                processes = try codebase.processes(environment: environment, logger: logger, activity: activity)
                definitions += codebase.definitions(processes: processes, client: clients.deliveries, now: clock)
                httpFunctions = codebase.httpFunctions(processes: processes)
                scheduled = codebase.scheduledFunctions(processes: processes)
                blocking = codebase.blockingFunctions(processes: processes)
            }
            if FileManager.default.fileExists(atPath: webhooks.path) {
                let declared = try WebhookConfiguration.load(from: webhooks, client: clients.deliveries, now: clock)
                definitions += declared.functions
                blocking += declared.blocking
            }
            guard definitions.count > (swiftFunctions?.events.count ?? 0) || !processes.isEmpty || !blocking.isEmpty else {
                throw FunctionError.unloadable("\(folder.path) holds no functions (no main.py, no webhooks.json)")
            }
            let backlog = functionsBacklog(logger: logger)
            let blockingFunctions = blocking.isEmpty
                ? nil : try BlockingFunctions(blocking, projectID: project, client: http, activity: activity, now: clock)
            return try FunctionsService(
                functions: definitions, processes: processes, httpFunctions: httpFunctions,
                scheduler: scheduled.isEmpty
                    ? nil
                    : Scheduler(functions: scheduled, client: http, environment: schedulerEnvironment(metrics: metrics, activity: activity, logger: logger)),
                blocking: blockingFunctions, naming: .init(databaseHost: "\(host):\(port)", projectID: project), backlog: backlog,
                environment: deliveryEnvironment(now: clock, metrics: metrics, logger: logger), activity: activity,
                executor: clients.deliveryThread)
        } catch let error as FunctionError {
            throw ValidationError("--functions: \(error)")
        }
    }

    /// Functions written in Swift, run in this process.
    struct SwiftFunctions {
        var events: [FunctionDefinition]
        var scheduled: [ScheduledFunction]
        /// Run once the server handed its parts over.
        var started: @Sendable () async throws -> Void = {}
    }

    /// The demo social app's server side (docs/social-server.md): its functions, with the
    /// operator's word list and retention settings, and its state in `<data>/social/`.
    func socialServerSide(
        _ backend: SocialBackend, data: URL, settings: SettingsFile.Social?, pushClient: HTTPClient, logger: Logger
    ) throws -> SwiftFunctions {
        let folder = data.appendingPathComponent("social")
        // Web Push: a key made once and kept (browsers subscribe with its public half).
        let push: SocialFunctions.Push
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let key = try VAPIDKeyFile(url: folder.appendingPathComponent("vapid-key")).loadOrCreate()
            let sender = try WebPushSender(
                client: pushClient, key: key, subject: settings?.push?.subject ?? "mailto:webpush@hearth.invalid", now: { Date() })
            // Plain http push services on this machine: for tests only.
            let loopback = ProcessInfo.processInfo.environment["HEARTH_PUSH_ALLOW_LOOPBACK"] == "1"
            push = SocialFunctions.Push(sender: sender, publicKey: key.publicKeyBase64URL, allowsLoopbackHTTP: loopback)
        } catch {
            throw ValidationError("the social app's Web Push key in \(folder.path): \(error)")
        }
        let maskedWords = try MaskedWordsFile(url: folder.appendingPathComponent("masked-words.txt"))
        var retention = SocialFunctions.Retention(
            postDays: settings?.retention?.postDays, inactiveAccountDays: settings?.retention?.inactiveAccountDays)
        if let schedule = settings?.retention?.schedule { retention.schedule = schedule }
        let functions = SocialFunctions(
            backend: backend, moderation: { maskedWords.moderation() }, now: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
            ledger: DeletedAccountsLedger(url: folder.appendingPathComponent("deleted-accounts.json")), retention: retention, push: push,
            logger: logger)
        do {
            return SwiftFunctions(events: try functions.definitions, scheduled: try functions.scheduled, started: functions.started)
        } catch let error as FunctionError {
            throw ValidationError("social.retention.schedule: \(error)")
        }
    }

    /// A service for Swift functions alone (no `--functions` folder).
    func swiftFunctionsService(_ swift: SwiftFunctions, metrics: ServerMetrics, logger: Logger) throws -> FunctionsService {
        let activity = FunctionActivity()
        return try FunctionsService(
            functions: swift.events,
            scheduler: swift.scheduled.isEmpty ? nil : Scheduler(functions: swift.scheduled, client: nil, environment: schedulerEnvironment(metrics: metrics, activity: activity, logger: logger)),
            naming: .init(databaseHost: "\(host):\(port)", projectID: project), backlog: functionsBacklog(logger: logger),
            environment: deliveryEnvironment(now: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }, metrics: metrics, logger: logger),
            activity: activity)
    }

    /// How scheduled runs are counted and shown.
    func schedulerEnvironment(metrics: ServerMetrics, activity: FunctionActivity, logger: Logger) -> Scheduler.Environment {
        Scheduler.Environment(
            observe: { function, scheduled, succeeded, duration in
                metrics.scheduledRun(function: function, succeeded: succeeded)
                activity.add(.scheduledRun(
                    function: function, scheduled: Int64(scheduled.timeIntervalSince1970 * 1000), succeeded: succeeded, duration: duration))
            }, logger: logger)
    }

    /// The bound on events waiting for the functions, warned about when reached.
    func functionsBacklog(logger: Logger) -> EventBacklog {
        EventBacklog(limit: functionBacklog) { [functionBacklog] queue, waiting in
            logger.warning("function events are piling up: past the bound, new ones are dropped", metadata: [
                "function": "\(queue.function)", "source": "\(queue.source)", "waiting": "\(waiting)", "bound": "\(functionBacklog)",
            ])
        }
    }

    /// How the functions' deliveries tell time and are counted.
    func deliveryEnvironment(now: @escaping @Sendable () -> Int64, metrics: ServerMetrics, logger: Logger) -> DeliveryLane.Environment {
        DeliveryLane.Environment(
            now: now,
            observe: { attempt in
                metrics.functionDelivery(function: attempt.function, result: attempt.activityResult, duration: attempt.duration, lag: attempt.lag)
            }, logger: logger)
    }

    /// Whether to run the demo app: as asked; else on a new data folder (or one the demo made)
    /// unless the operator brought their own rules or wants the emulator. A folder that holds
    /// other data never gets demo content or the app's rules unasked.
    func runsDemo(in folder: URL) -> Bool {
        if let demo { return demo }
        guard rules == nil, storageRules == nil, !emulator else { return false }
        let files = FileManager.default
        return !files.fileExists(atPath: folder.appendingPathComponent("databases").path)
            || files.fileExists(atPath: folder.appendingPathComponent(Seed.accountsFile).path)
    }

    /// The text of the rules file at `path`, checked by `validate` (which throws its first problem).
    static func rulesFile(_ path: String, kind: String, validate: (String) throws -> Void) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read the \(kind) file \(path): \(error.localizedDescription)")
        }
        do {
            try validate(text)
        } catch {
            throw ValidationError("\(path): \(error)")
        }
        return text
    }

    /// Bytes from `10485760`, `10M`, `512K` or `5G` (powers of 1024); nil if not positive.
    static func byteCount(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text.uppercased())
        var scale: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard let value = Int64(digits), value > 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : bytes
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
