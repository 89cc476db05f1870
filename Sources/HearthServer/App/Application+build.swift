import AsyncHTTPClient
import Foundation
import HearthAuth
import HearthBackup
import HearthCluster
import HearthEngine
import HearthFiles
import HearthFunctions
import HearthRules
import HearthStore
import Hummingbird
import Logging
import ServiceLifecycle

/// Builds the Hearth HTTP application: the REST API over the databases in `folder`.
///
/// This is the one composition root: `hearth serve` and the tests both call it.
/// - Parameters:
///   - configuration: where to listen and request limits.
///   - folder: the opened, locked data folder; it is closed when the application stops.
///   - cluster: the cluster this server is a node of (prepared; its client running), or nil
///     for a single node whose databases live in `folder`.
///   - recentLogs: the warnings and errors the logger's handler keeps (served to admins at
///     `/.hearth/logs`).
///   - requestLog: the latest requests, across transports (served to admins at `/.hearth/requests`);
///     nil for one of ``ServerConfiguration/requestLogSize``.
///   - metrics: where the server's figures are counted (served at `/metrics`); give the same
///     one to the databases' ``HearthStore/DatabaseOptions/onCommit``.
///   - logger: the logger for the server and its requests.
///   - functions: the functions to run, whose recorder `folder`'s databases were given
///     (``HearthStore/DatabaseOptions/eventRecorder``, the cluster's for a node); nil for none.
///     On a cluster node, only the holder of the functions lease delivers events.
///   - functionsClient: the client HTTPS and callable functions are called with (the one
///     `functions` were made with: ``AsyncHTTPClient/HTTPClient/makeForFunctions()``); the
///     caller shuts it down after the application stopped. Nil: none are served (Swift
///     functions need none).
///   - onServices: given the server's parts once they are made, before any function's event is
///     delivered (for Swift functions that use them).
///   - onServerRunning: called with the bound port once the server accepts connections.
///   - onFilesServerRunning: called with the bound files port (``ServerConfiguration/filesPort``)
///     once that listener accepts connections.
///   - onMetricsServerRunning: the same for ``ServerConfiguration/metricsPort``.
/// - Throws: ``HearthRules/RulesError`` when the configured default rules are invalid, and
///   ``HearthFiles/StorageRulesSyntaxError`` when the storage rules are.
public func buildApplication(
    configuration: ServerConfiguration,
    folder: DataFolder,
    cluster: ClusterNode? = nil,
    metrics: ServerMetrics = ServerMetrics(),
    recentLogs: RecentLogEntries = RecentLogEntries(),
    requestLog: RequestLog? = nil,
    functions: FunctionsService? = nil,
    functionsClient: HTTPClient? = nil,
    onServices: @escaping @Sendable (ServerServices) -> Void = { _ in },
    logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    onFilesServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let requestLog = requestLog ?? RequestLog(capacity: configuration.requestLogSize)
    let defaultRules = try configuration.defaultRules.map { text throws(RulesError) in try SecurityRules(parsing: text) }
    let rules = RulesRegistry(defaultRules: defaultRules ?? .closed)
    let hub = ListenerHub(
        maxEventBytes: configuration.maxStreamEventBytes, rules: { rules.loadedRules(named: $0) }, clock: configuration.clock)
    let providerHTTP = IdentityProviderHTTP()
    let accounts = try await makeAuthService(
        configuration: configuration, folder: folder, cluster: cluster, http: providerHTTP, functions: functions, logger: logger)
    // An account disabled, deleted or signed out everywhere: its streams end at once (its
    // realtime sessions are signed out by the realtime service, which watches the gate too).
    accounts.gate.observe { [hub] uid in hub.closeStreams(signedInAs: uid) }
    let serviceAccounts = ServiceAccounts(store: accounts.store, issuer: accounts.issuer, clock: configuration.clock, logger: logger)
    if functions != nil, let file = configuration.functionsCredentialsFile, let port = configuration.functionsPort {
        try await FunctionsCredentials.renew(file, serviceAccounts: serviceAccounts, tokenURI: "http://127.0.0.1:\(port)/oauth2/token")
    }
    let admin = AdminCredential(token: configuration.adminToken, emulator: configuration.emulator, serviceAccounts: serviceAccounts)
    let storageRules = try configuration.storageRules.map { text throws(StorageRulesSyntaxError) in try StorageRules(parsing: text) }
    let filesDirectory = configuration.filesDirectory ?? folder.url.appendingPathComponent("files")
    let files: FileStore
    if let cluster {
        // Content in the folder every node mounts, metadata in the cluster's PostgreSQL. Only
        // what is a day old can be a crash's leftover: another node's upload may be under way.
        files = try FileStore(
            directory: filesDirectory, metadata: cluster.fileMetadata, maxObjectSize: configuration.maxFileBytes,
            uploadLimits: configuration.uploadLimits, clock: configuration.clock)
        let leftovers = try await files.removeLeftovers(keepingNewerThan: 24 * 3600 * 1000)
        if leftovers != FileStore.Leftovers() {
            logger.info("removed day-old unfinished uploads", metadata: ["uploads": "\(leftovers.uploads)", "files": "\(leftovers.blobs)"])
        }
    } else {
        files = try FileStore(
            directory: filesDirectory, maxObjectSize: configuration.maxFileBytes, uploadLimits: configuration.uploadLimits,
            clock: configuration.clock, eventRecorder: functions?.storageRecorder)
        // This process holds the data folder: what a crash left half-done can go.
        let leftovers = try files.removeLeftovers()
        if leftovers != FileStore.Leftovers() {
            logger.info("removed unfinished uploads", metadata: ["uploads": "\(leftovers.uploads)", "files": "\(leftovers.blobs)"])
        }
    }
    let filesOrigin = FilesOrigin(origin: configuration.filesOrigin)
    let proxies = ProxyTrust(addresses: configuration.trustedProxies, trustsLoopback: configuration.trustLoopbackProxies)
    let limits = configuration.connectionLimits
    let maxConnections = limits.resolvedMaxConnections()
    let gate = ConnectionGate(limits: limits, maxConnections: maxConnections, proxies: proxies, metrics: metrics, logger: logger)
    logger.info("connection limits", metadata: [
        "max_connections": "\(maxConnections.map(String.init) ?? "none")",
        "descriptor_limit": "\(ConnectionLimits.descriptorLimit().map(String.init) ?? "none")",
        "per_address": "\(limits.maxConnectionsPerAddress.map(String.init) ?? "none")",
        "header_timeout": "\(limits.headerTimeout)", "body_timeout": "\(limits.bodyTimeout)", "idle_timeout": "\(limits.idleTimeout)",
    ])
    let databases: any DatabaseProvider = cluster?.databases ?? folder
    // The one subscription to the databases' commits and setting changes: the operations layer
    // hands them to `hub` and `rules` (see DatabaseOperations.init).
    var operations = DatabaseOperations(databases: databases, rules: rules, hub: hub, clock: configuration.clock, logger: logger)
    operations.metrics = metrics
    operations.requestLog = requestLog
    operations.limits = DatabaseLimits(
        defaultDatabase: configuration.defaultDatabase, createOnUse: configuration.emulator,
        maxOpen: DatabaseLimits.maxOpen(
            configured: configuration.maxOpenDatabases, descriptorLimit: ConnectionLimits.descriptorLimit(),
            maxConnections: maxConnections),
        idleAfter: Int64(configuration.idleDatabaseTimeout / .milliseconds(1)))
    if operations.limits.maxOpen < configuration.maxOpenDatabases {
        // Said, not warned: the default asks for more than a common descriptor limit leaves.
        logger.info("fewer databases may be open than asked: the descriptors left after connections allow no more", metadata: [
            "max_open_databases": "\(operations.limits.maxOpen)", "asked": "\(configuration.maxOpenDatabases)",
        ])
    }
    let disconnects: any DisconnectQueue
    if let cluster {
        disconnects = cluster.disconnects
    } else {
        let realtimeFolder = folder.url.appendingPathComponent("realtime")
        try FileManager.default.createDirectory(at: realtimeFolder, withIntermediateDirectories: true)
        disconnects = try DisconnectQueueStore(path: realtimeFolder.appendingPathComponent("disconnects.sqlite").path)
    }
    let realtime = RealtimeService(
        operations: operations, admin: admin, issuer: accounts.issuer, disconnects: disconnects, accounts: accounts.store,
        gate: accounts.gate, limits: configuration.realtimeLimits, logger: logger)
    if let cluster {
        cluster.onTakeOver { records, deadNode in await realtime.applyDisconnects(records, of: "node \(deadNode)") }
        cluster.onLeaseLost { realtime.shutDown() }
    }
    // Before any client connects: the onDisconnect operations of connections the last run had.
    await realtime.applyLeftoverDisconnects()
    let longPolling = RealtimeLongPolling(service: realtime, defaultDatabase: configuration.defaultDatabase, proxies: proxies)
    let webSocket = RealtimeWebSocket(service: realtime, longPolling: longPolling, defaultDatabase: configuration.defaultDatabase)
    let bodyBudget = ByteBudget(limit: configuration.maxBufferedBodyBytes)
    let stats = StatsResponder(
        databases: databases, hub: hub, realtime: realtime, admin: admin, bodyBudget: bodyBudget, clock: configuration.clock,
        started: configuration.clock())
    var metricsResponder = MetricsResponder(metrics: metrics, stats: stats, admin: admin)
    metricsResponder.functions = functions
    let metricsHistory = MetricsHistory(capacity: configuration.metricsHistorySize, interval: configuration.metricsHistoryInterval)
    // Backups on a schedule and from the console share one gate: one runs at a time.
    let backupGate = BackupGate()
    let backups = configuration.backupFolder.flatMap { backupFolder -> BackupSchedule? in
        guard cluster == nil else { return nil }
        return BackupSchedule(
            backup: DataFolderBackup(
                source: folder.url, filesDirectory: configuration.filesDirectory, functionsFolder: configuration.functionsFolder,
                clock: configuration.clock),
            folder: backupFolder, interval: configuration.backupInterval ?? .seconds(86_400), keep: configuration.backupKeep,
            report: BackupReport(
                finished: { metrics.backupFinished(bytes: $0, duration: $1, at: $2) }, failed: { metrics.backupFailed() }),
            logger: logger, gate: backupGate)
    }
    // The owner's app: a folder as it is (`--hosting`), else the releases deployed into the
    // files folder (which a cluster's nodes share).
    let hostingReleases = HostingReleases(folder: HostingReleases.folder(inFiles: filesDirectory))
    let hostingSource: HostingResponder.Source = configuration.hosting.map {
        .folder(HostingDeployment(settings: $0, excluding: [folder.url, filesDirectory]))
    }
        ?? .releases(HostingReleaseWatcher(
            releases: hostingReleases, hostSites: configuration.hostingHosts, sdkFolder: configuration.hostingSDKFolder, logger: logger))
    var database = DatabaseResponder(
        operations: operations, configuration: configuration, admin: admin, issuer: accounts.issuer, gate: accounts.gate)
    database.bodyBudget = bodyBudget
    let responder = HearthResponder(
        database: database,
        longPolling: longPolling,
        auth: AuthResponder(
            service: accounts, admin: admin, serviceAccounts: serviceAccounts, proxies: proxies, pages: configuration.webFiles),
        session: WebSessionResponder(service: accounts, proxies: proxies),
        files: FilesResponder(
            store: files, rules: storageRules ?? .closed, admin: admin, issuer: accounts.issuer, gate: accounts.gate,
            clock: configuration.clock, proxies: proxies),
        cloudStorage: CloudStorageResponder(
            store: files, admin: admin, issuer: accounts.issuer, emulator: configuration.emulator,
            defaultBucket: configuration.storageBucket, clock: configuration.clock, proxies: proxies),
        stats: stats,
        web: WebResponder(
            files: configuration.webFiles, projectID: configuration.projectID, bucket: configuration.storageBucket,
            database: configuration.defaultDatabase),
        hosting: HostingResponder(source: hostingSource, publicURL: configuration.publicURL, proxies: proxies),
        filesOrigin: filesOrigin,
        proxies: proxies,
        metrics: metrics,
        metricsResponder: metricsResponder,
        metricsHistory: MetricsHistoryResponder(history: metricsHistory, admin: admin),
        logs: RecentLogsResponder(recent: recentLogs, admin: admin),
        requests: RequestLogResponder(log: requestLog, admin: admin),
        backups: BackupsResponder(
            operations: operations, admin: admin, schedule: backups, every: backups == nil ? nil : configuration.backupInterval,
            gate: backupGate, dataFolder: folder.url,
            functionsFolder: configuration.functionsFolder, scratch: FileManager.default.temporaryDirectory, maxWriteBytes: configuration.maxWriteBytes),
        dataBrowse: DataBrowseResponder(operations: operations, admin: admin, defaultDatabase: configuration.defaultDatabase),
        functionsAdmin: FunctionsAdminResponder(functions: functions, admin: admin),
        hostingAdmin: HostingAdminResponder(source: hostingSource, releases: hostingReleases, admin: admin),
        functions: functions.flatMap { functions in
            functionsClient.map { client in
                FunctionsResponder(
                    functions: functions, projectID: configuration.projectID, admin: admin, issuer: accounts.issuer,
                    gate: accounts.gate, client: client, bodyBudget: bodyBudget, clock: configuration.clock)
            }
        },
        accessLog: configuration.accessLog
    )
    // Services stop in reverse order: the cluster node, first here, keeps replicating until
    // everything else has stopped.
    var services: [any Service] = cluster.map { [$0] } ?? []
    services += [
        DataFolderService(folder: folder),
        StreamKeepAliveService(hub: hub, realtime: realtime, longPolling: longPolling, interval: configuration.keepAliveInterval, clock: configuration.clock),
        IdentityProviderHTTP.ShutdownService(http: providerHTTP),
        IdleDatabaseService(operations: operations, interval: min(configuration.idleDatabaseTimeout / 4, .seconds(60))),
        MetricsHistoryService(history: metricsHistory, metrics: metricsResponder, clock: configuration.clock),
        UploadSweepService(
            store: files, interval: configuration.uploadSweepInterval, metrics: metrics, logger: logger,
            onSweep: configuration.onUploadSweep),
    ]
    if configuration.backupInterval != nil, let backups {
        services.append(backups)
    }
    onServices(ServerServices(databases: databases, defaultDatabase: configuration.defaultDatabase, files: files, accounts: accounts))
    if let functions {
        let runner = FunctionsRunner(
            functions: functions, folder: folder, cluster: cluster, files: files, accounts: accounts.store, operations: operations,
            logger: logger)
        try await runner.connect()
        services.append(runner)
    }
    if let metricsPort = configuration.metricsPort {
        var open = metricsResponder
        open.open = true
        services.append(Application(
            responder: MetricsPortResponder(metrics: open),
            server: LimitedHTTP1Channel.builder(gate: gate),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.metricsHost, port: metricsPort), serverName: "Hearth"),
            onServerRunning: { channel in await onMetricsServerRunning(channel.localAddress?.port ?? metricsPort) },
            logger: logger))
    }
    if let filesPort = configuration.filesPort {
        var filesResponder = responder
        filesResponder.filesOnly = true
        services.append(Application(
            responder: ForwardedClientLimit(responder: filesResponder, gate: gate),
            server: LimitedHTTP1Channel.builder(gate: gate),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: filesPort), serverName: "Hearth"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? filesPort
                filesOrigin.listening(on: port)
                await onFilesServerRunning(port)
            },
            logger: logger))
    }
    if let functionsPort = configuration.functionsPort, let adminToken = configuration.adminToken {
        services.append(Application(
            responder: FunctionsPortResponder(responder: responder, adminToken: adminToken, port: functionsPort),
            server: LimitedHTTP1Channel.builder(gate: gate),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: functionsPort), serverName: "Hearth"),
            logger: logger))
    }
    return Application(
        responder: ForwardedClientLimit(responder: responder, gate: gate),
        server: RealtimeHTTPChannel.builder(webSocket: webSocket, gate: gate),
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.host, port: configuration.port),
            serverName: "Hearth"
        ),
        services: services,
        onServerRunning: { channel in
            await onServerRunning(channel.localAddress?.port ?? configuration.port)
        },
        logger: logger
    )
}

/// The account service over `<data>/auth/` (the accounts database and the token signing key),
/// or, on a cluster node, over the cluster's PostgreSQL with the key every node shares.
func makeAuthService(
    configuration: ServerConfiguration, folder: DataFolder, cluster: ClusterNode? = nil, http: any HTTPFetching,
    functions: FunctionsService? = nil, logger: Logger
) async throws -> AuthService {
    var policy = AuthService.Policy()
    policy.emulator = configuration.emulator
    policy.emailEnumerationProtection = configuration.emailEnumerationProtection
    policy.failuresPerAccount = configuration.signInFailuresPerAccount
    policy.failuresPerAddress = configuration.signInFailuresPerAddress
    policy.signUpBurstPerAddress = configuration.signUpBurstPerAddress
    policy.signUpsPerAddressPerHour = configuration.signUpsPerAddressPerHour
    let local = configuration.host == "0.0.0.0" || configuration.host == "::" ? "127.0.0.1" : configuration.host
    let publicURL = configuration.publicURL ?? "http://\(local):\(configuration.port)"
    let publicHost = URL(string: publicURL)?.host ?? "localhost"
    policy.linkDomains = Set([publicHost.lowercased(), "localhost", "127.0.0.1", local] + configuration.authorizedDomains)
    if !configuration.emulator {
        policy.authorizedDomains = Set([publicHost.lowercased(), "localhost", "127.0.0.1", local] + configuration.authorizedDomains)
    }
    let email = EmailDelivery(
        mailer: try configuration.smtp.map { try SMTPMailer(settings: $0) }, sender: configuration.emailSender ?? "noreply@\(publicHost)",
        appName: configuration.appName, actionURL: publicURL + "/__/auth/action", templates: configuration.emailTemplates)
    let hasher = PasswordHasher(rounds: configuration.passwordHashRounds)
    let service: AuthService
    if let cluster {
        service = try await AuthService.open(
            store: cluster.accounts, signingKeyPEM: try await cluster.secrets.signingKeyPEM(), projectID: configuration.projectID,
            policy: policy, hasher: hasher, email: email, http: http, blockingHooks: functions?.blocking, clock: configuration.clock,
            logger: logger)
    } else {
        service = try await AuthService.open(
            in: folder.url.appendingPathComponent("auth"), projectID: configuration.projectID, policy: policy,
            hasher: hasher, email: email, http: http, events: functions?.accountRecorder, blockingHooks: functions?.blocking,
            clock: configuration.clock, logger: logger)
    }
    try await service.installProviders(configuration.providers)
    return service
}
