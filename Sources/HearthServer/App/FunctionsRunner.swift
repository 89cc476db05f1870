import HearthAuth
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
struct FunctionsRunner: Service {
    let functions: FunctionsService
    let folder: DataFolder
    let files: FileStore
    let accounts: any AccountStorage
    let operations: DatabaseOperations
    let logger: Logger

    /// Subscribes to the databases' commits: the first commit of a database attaches its
    /// outbox (and keeps it open); every commit wakes its lanes. Then attaches every database
    /// that exists and a function watches, so events left by the last run are delivered.
    func connect() throws {
        let functions = self.functions
        let operations = self.operations
        folder.events.subscribe { database, event in
            guard case .committed = event, let outbox = database.outbox else { return }
            if !functions.isAttached(source: outbox.source) {
                // Only a database a function watches is kept open (and given lanes).
                if !functions.recorder.functions(watching: database.name).isEmpty { operations.keepOpen(database.name) }
                functions.attach(outbox, database: database.name)
            }
            functions.committed(source: outbox.source)
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

    func run() async throws {
        logger.info("functions are running", metadata: ["functions": "\(functions.functions.map(\.name).joined(separator: ", "))"])
        await cancelWhenGracefulShutdown {
            await functions.run()
        }
    }
}
