import HearthAuth
import HearthCluster
import HearthEngine
import HearthFiles
import HearthFunctions
import HearthOutbox
import HearthStore
import Logging
import ServiceLifecycle

/// Runs the server's functions (``HearthFunctions/FunctionsService``) beside it: connects
/// them to the databases' commits, starts delivery from the databases that exist, the file
/// store and the account store (whose triggers wake their lanes themselves), and stops
/// delivering at shutdown (what is not delivered waits in the outboxes for the next start).
///
/// On a cluster node the outboxes are the cluster's (in PostgreSQL, every node's events in
/// them), and the node delivers only while it holds the functions lease
/// (``HearthCluster/FunctionsLease``): one node at a time, another once it dies. The holder
/// applies every node's database writes, which wakes its lanes; other nodes' account and file
/// changes do not reach it, so it also wakes every lane each lease renewal.
struct FunctionsRunner: Service {
    let functions: FunctionsService
    let folder: DataFolder
    let cluster: ClusterNode?
    let files: FileStore
    let accounts: any AccountStorage
    let operations: DatabaseOperations
    let logger: Logger

    /// Subscribes to the databases' commits: the first commit of a database attaches its
    /// outbox (and keeps it open); every commit wakes its lanes. Then attaches every database
    /// that exists and a function watches, so events left by the last run are delivered.
    func connect() async throws {
        let functions = self.functions
        let operations = self.operations
        (cluster?.databases.events ?? folder.events).subscribe { database, event in
            guard case .committed = event, let outbox = database.outbox else { return }
            if !functions.isAttached(source: outbox.source) {
                // Only a database a function watches is kept open (and given lanes).
                if !functions.recorder.functions(watching: database.name).isEmpty { operations.keepOpen(database.name) }
                functions.attach(outbox, database: database.name)
            }
            functions.committed(source: outbox.source)
        }
        if let cluster {
            functions.attachFiles(PostgresOutbox(source: StorageEventRecorder.source, client: cluster.client, logger: logger))
            functions.attachAccounts(PostgresOutbox(source: AccountTriggerRecorder.source, client: cluster.client, logger: logger))
            for name in try await cluster.databases.databaseNames() where !functions.recorder.functions(watching: name).isEmpty {
                let database = try await cluster.databases.database(named: name)
                guard let outbox = database.outbox, !functions.isAttached(source: outbox.source) else { continue }
                operations.keepOpen(name)
                functions.attach(outbox, database: name)
            }
            return
        }
        if let outbox = files.outbox { functions.attachFiles(outbox) }
        if let outbox = (accounts as? AccountStore)?.outbox { functions.attachAccounts(outbox) }
        for name in folder.databaseNames() where !functions.recorder.functions(watching: name).isEmpty {
            let database = try folder.database(named: name)
            guard let outbox = database.outbox, !functions.isAttached(source: outbox.source) else { continue }
            operations.keepOpen(name)
            functions.attach(outbox, database: name)
        }
    }

    /// How often a single node looks for events other processes recorded.
    static let otherProcessesInterval = Duration.seconds(10)

    func run() async throws {
        logger.info("functions are running", metadata: ["functions": "\(functions.functions.map(\.name).joined(separator: ", "))"])
        guard let cluster else {
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask { await functions.run() }
                    group.addTask {
                        // Account changes `hearth users` makes in the data folder from another
                        // process record events this one is not told of: looked for now and then.
                        while !Task.isCancelled {
                            try? await Task.sleep(for: Self.otherProcessesInterval)
                            functions.wakeAll()
                        }
                    }
                }
            }
            return
        }
        let lease = cluster.functionsLease()
        let (held, hold) = AsyncStream.makeStream(of: Bool.self)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await lease.run { holds in
                        hold.yield(holds)
                        if holds { functions.wakeAll() }
                    }
                    hold.finish()
                }
                group.addTask { await functions.run(deliveringWhile: held) }
                group.addTask {
                    // Other nodes' account and file commits: looked for each renewal.
                    while !Task.isCancelled {
                        try? await Task.sleep(for: cluster.settings.heartbeatInterval)
                        functions.wakeAll()
                    }
                }
            }
        }
    }
}
