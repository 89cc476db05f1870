import Foundation
import HearthAuth
import HearthFiles
import HearthStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// One node of a Hearth cluster: its connection pool to the shared PostgreSQL, its replicas of
/// the databases, its onDisconnect queue there, and, as a service, the loops that keep it in
/// the cluster — following announcements of appends (LISTEN), polling in case one was missed,
/// renewing its lease, and taking over the onDisconnect operations of nodes whose lease ran out.
///
/// Start-up order: run ``runClient()`` in a task, then ``prepare()``, then run the node as a
/// service beside the server.
public final class ClusterNode: Service {
    /// How the node takes part.
    public struct Settings: Sendable {
        /// This node's ID, unique in the cluster and the same across its restarts.
        public var id: String
        /// Where clients or operators reach it (shown by `hearth cluster status`).
        public var address: String
        /// How long the node counts as alive after a heartbeat.
        public var leaseSeconds: Int = 10
        /// How often it renews its lease and reports its positions.
        public var heartbeatInterval: Duration = .seconds(2)
        /// How often it looks for appends it was not told about.
        public var pollInterval: Duration = .seconds(1)

        public init(id: String, address: String) {
            self.id = id
            self.address = address
        }
    }

    struct Handlers {
        var takeOver: (@Sendable (_ records: [DisconnectQueueStore.Record], _ deadNode: String) async -> Void)?
        var leaseLost: (@Sendable () -> Void)?
    }

    public let settings: Settings
    public let client: PostgresClient
    public let log: ClusterLog
    public let nodes: ClusterNodes
    public let databases: ClusterDatabases
    public let disconnects: ClusterDisconnects
    /// The cluster's accounts, sessions and provider configurations.
    public let accounts: PostgresAccountStore
    /// Secrets every node shares (the token signing key, the admin token).
    public let secrets: ClusterSecrets
    /// File metadata (objects and resumable uploads); the content is in a shared folder.
    public let fileMetadata: PostgresFileMetadata
    let logger: Logger
    private let handlers = Mutex(Handlers())

    /// - Parameters:
    ///   - accountEvents: the functions' account triggers, recorded with the accounts.
    ///   - fileEvents: the functions' storage triggers, recorded with the files' metadata.
    public init(
        client: PostgresClient, settings: Settings, options: DatabaseOptions, accountEvents: (any AccountEventRecorder)? = nil,
        fileEvents: (any FileEventRecorder)? = nil, logger: Logger
    ) {
        self.settings = settings
        self.client = client
        self.logger = logger
        log = ClusterLog(client: client, node: settings.id, logger: logger)
        nodes = ClusterNodes(client: client, logger: logger)
        databases = ClusterDatabases(log: log, options: options, logger: logger)
        disconnects = ClusterDisconnects(client: client, node: settings.id, logger: logger)
        accounts = PostgresAccountStore(client: client, recorder: accountEvents, logger: logger)
        secrets = ClusterSecrets(client: client, logger: logger)
        fileMetadata = PostgresFileMetadata(client: client, recorder: fileEvents, logger: logger)
    }

    /// Runs the connection pool until the task is cancelled.
    public func runClient() async {
        await client.run()
    }

    /// Makes the cluster's tables when they are missing and joins the cluster (a first
    /// heartbeat). Needs ``runClient()`` running.
    /// - Throws: when PostgreSQL cannot be reached in time (the pool would wait without end).
    public func prepare() async throws {
        try await log.withDeadline { try await self.prepareTables() }
    }

    private func prepareTables() async throws {
        try await log.prepare()
        try await nodes.prepare()
        try await disconnects.prepare()
        try await accounts.prepare()
        try await secrets.prepare()
        try await fileMetadata.prepare()
        try await FunctionsLease.prepare(on: client, logger: logger)
        try await nodes.heartbeat(
            node: settings.id, address: settings.address, leaseSeconds: settings.leaseSeconds, applied: [:])
    }

    /// The lease that picks the one node delivering the functions' events, renewed as often as
    /// the node's own.
    public func functionsLease() -> FunctionsLease {
        FunctionsLease(
            log: log, node: settings.id,
            timing: FunctionsLease.Timing(leaseSeconds: settings.leaseSeconds, renewInterval: settings.heartbeatInterval),
            logger: logger)
    }

    /// Called with the onDisconnect operations of a node this one took over (its lease ran out).
    public func onTakeOver(_ handler: @escaping @Sendable (_ records: [DisconnectQueueStore.Record], _ deadNode: String) async -> Void) {
        handlers.withLock { $0.takeOver = handler }
    }

    /// Called when this node could not renew its lease in time, or learns that another node took
    /// it over: the node's realtime connections must end (their onDisconnect operations may
    /// have run elsewhere), and their clients reconnect.
    public func onLeaseLost(_ handler: @escaping @Sendable () -> Void) {
        handlers.withLock { $0.leaseLost = handler }
    }

    public func run() async throws {
        let (takeOvers, takeOver) = AsyncStream.makeStream(of: (node: String, records: [DisconnectQueueStore.Record]).self)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.databases.run() }
                group.addTask { await self.followAnnouncements() }
                group.addTask { await self.keepLeaseAndPoll(takeOver: takeOver) }
                // Applying a dead node's operations may take a while: never in the way of this
                // node's own heartbeats.
                group.addTask {
                    for await (dead, records) in takeOvers {
                        self.logger.info("took over a node whose lease ran out", metadata: [
                            "node": "\(dead)", "onDisconnect operations": "\(records.count)",
                        ])
                        if let handler = self.handlers.withLock({ $0.takeOver }) { await handler(records, dead) }
                    }
                }
            }
        }
        takeOver.finish()
        databases.close()
        try? await nodes.leave(node: settings.id)
    }

    /// Wakes a database when another node announces an append to it, reconnecting as needed.
    private func followAnnouncements() async {
        while !Task.isCancelled {
            do {
                try await log.announcements(listening: { self.databases.pokeAll() }) { database, sequence in
                    guard let replica = self.databases.openDatabases()[database],
                        (replica.appliedPosition ?? 0) < sequence
                    else { return }
                    replica.poke()
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("lost the cluster's announcements; reconnecting", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Polls every database, and renews the lease and takes over dead nodes every heartbeat.
    /// The lease counts from when a heartbeat was sent: once most of it has passed without one
    /// succeeding, this node's realtime connections end, before another node can take them over.
    private func keepLeaseAndPoll(
        takeOver: AsyncStream<(node: String, records: [DisconnectQueueStore.Record])>.Continuation
    ) async {
        let clock = ContinuousClock()
        let lease = Duration.seconds(settings.leaseSeconds)
        var renewedFrom = clock.now
        var nextHeartbeat = clock.now
        var leaseLost = false
        while !Task.isCancelled {
            databases.pokeAll()
            if !leaseLost, clock.now - renewedFrom > lease * 0.8 {
                leaseLost = true
                logger.error("this node could not renew its lease in time; ending its realtime connections")
                handlers.withLock { $0.leaseLost }?()
            }
            if clock.now >= nextHeartbeat {
                nextHeartbeat = clock.now.advanced(by: settings.heartbeatInterval)
                let sent = clock.now
                do {
                    let applied = databases.appliedPositions()
                    let takenOver = try await log.withDeadline { [nodes, settings] in
                        try await nodes.heartbeat(
                            node: settings.id, address: settings.address, leaseSeconds: settings.leaseSeconds, applied: applied)
                    }
                    renewedFrom = sent
                    if takenOver && !leaseLost {
                        logger.warning("this node had been taken over by another; ending its realtime connections")
                        handlers.withLock { $0.leaseLost }?()
                    }
                    leaseLost = false
                    let taken = try await log.withDeadline { [disconnects, settings] in
                        try await disconnects.takeOverExpired(by: settings.id)
                    }
                    for entry in taken { takeOver.yield(entry) }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("could not renew this node's lease", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: min(settings.pollInterval, settings.heartbeatInterval))
        }
    }
}

extension ClusterNode {
    /// Reads a connection URL, `postgres://user:password@host:port/database?sslmode=…`
    /// (`disable`, `prefer` — the default — or `require`), into a client configuration.
    public static func clientConfiguration(url text: String) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
            let host = url.host, !host.isEmpty
        else {
            throw ClusterURLError(text: text, problem: "use postgres://user:password@host:port/database")
        }
        guard let user = url.user.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw ClusterURLError(text: text, problem: "it names no user")
        }
        let database = url.path.isEmpty ? nil : String(url.path.dropFirst()).removingPercentEncoding
        var tls: PostgresClient.Configuration.TLS = .prefer(.makeClientConfiguration())
        for item in url.queryItems ?? [] where item.name == "sslmode" {
            switch item.value {
            case "disable": tls = .disable
            case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
            case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
            default: throw ClusterURLError(text: text, problem: "sslmode must be disable, prefer or require")
            }
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password?.removingPercentEncoding,
            database: database, tls: tls)
        // A node that cannot reach PostgreSQL answers writes with 503 soon rather than late.
        configuration.options.connectTimeout = .seconds(3)
        // PostgreSQL's side: no statement runs or waits for a lock without end, a transaction
        // left open by a node that vanished is ended (its locks released), and a dead client
        // connection is noticed in about half a minute rather than TCP's two hours.
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", "60s"), ("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "10s"),
            ("tcp_keepalives_idle", "10"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
        ]
        return configuration
    }
}

/// A `--cluster` URL that cannot be used.
public struct ClusterURLError: Error, CustomStringConvertible {
    public var text: String
    public var problem: String
    public init(text: String, problem: String) {
        self.text = text
        self.problem = problem
    }

    /// The URL without its password: what messages show.
    public var shownURL: String {
        text.replacingOccurrences(of: #"://([^:/@]*):[^@]*@"#, with: "://$1:***@", options: .regularExpression)
    }

    public var description: String {
        "The cluster URL \(shownURL) cannot be used: \(problem)."
    }
}
