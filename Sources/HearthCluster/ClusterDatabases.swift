import Foundation
import HearthCore
import HearthStore
import Logging
import Synchronization

/// A cluster node's databases: each a replica (``HearthStore/Database/replica(name:log:options:events:logger:)``)
/// of the shared log, opened on first use and then kept following the log by ``run()``.
///
/// Threading: `state` guards the open and opening databases; opening one runs in a task that
/// every caller asking for the same name awaits, so a database is loaded once.
public final class ClusterDatabases: DatabaseProvider {
    struct State {
        var open: [String: Database] = [:]
        var opening: [String: Task<Database, any Error>] = [:]
        var closed = false
    }

    let log: ClusterLog
    let options: DatabaseOptions
    let logger: Logger
    /// The commits and setting changes of every replica it opens.
    public let events = DatabaseEvents()
    private let state = Mutex(State())
    private let opened: AsyncStream<Database>
    private let announceOpened: AsyncStream<Database>.Continuation

    public init(log: ClusterLog, options: DatabaseOptions, logger: Logger) {
        self.log = log
        self.options = options
        self.logger = logger
        (opened, announceOpened) = AsyncStream.makeStream(of: Database.self)
    }

    public func database(named name: String) async throws -> Database {
        guard DataFolder.isValidDatabaseName(name) else {
            throw HearthError(.notFound, "Database name \(name) is not valid.")
        }
        let (existing, task) = state.withLock { state -> (Database?, Task<Database, any Error>?) in
            if let database = state.open[name] { return (database, nil) }
            guard !state.closed else { return (nil, nil) }
            if let task = state.opening[name] { return (nil, task) }
            let task = Task { [log, options, events, logger] in
                try await Database.replica(name: name, log: log, options: options, events: events, logger: logger)
            }
            state.opening[name] = task
            return (nil, task)
        }
        if let existing { return existing }
        guard let task else { throw HearthError(.unavailable, "The server is stopping.") }
        do {
            let database = try await task.value
            let (isNew, closed) = state.withLock { state -> (Bool, Bool) in
                state.opening[name] = nil
                guard !state.closed else { return (false, true) }
                guard state.open[name] == nil else { return (false, false) }
                state.open[name] = database
                return (true, false)
            }
            if closed {
                // Loaded after the node began to stop: it would get no replication task.
                database.close()
                throw HearthError(.unavailable, "The server is stopping.")
            }
            if isNew { announceOpened.yield(database) }
            return state.withLock { $0.open[name] } ?? database
        } catch let error as HearthError {
            state.withLock { $0.opening[name] = nil }
            throw error
        } catch {
            state.withLock { $0.opening[name] = nil }
            logger.error("could not load a database from the cluster", metadata: ["database": "\(name)", "error": "\(error)"])
            throw HearthError(.unavailable, "The database is unavailable: the cluster's log cannot be reached. Try again.")
        }
    }

    public func databaseIfReady(named name: String) throws -> Database? {
        guard DataFolder.isValidDatabaseName(name) else {
            throw HearthError(.notFound, "Database name \(name) is not valid.")
        }
        if let database = state.withLock({ $0.open[name] }) { return database }
        Task { _ = try? await self.database(named: name) }
        return nil
    }

    public func databaseNames() async throws -> [String] {
        let open = state.withLock { Array($0.open.keys) }
        let stored = (try? await log.databaseNames()) ?? []
        return Set(open + stored).sorted()
    }

    public func openDatabases() -> [String: Database] {
        state.withLock { $0.open }
    }

    public func openDatabase(named name: String) -> Database? {
        state.withLock { $0.open[name] }
    }

    public func isOpen(named name: String) -> Bool {
        state.withLock { $0.open[name] != nil }
    }

    public var openCount: Int { state.withLock { $0.open.count + $0.opening.count } }

    public func databaseExists(named name: String) async throws -> Bool {
        guard DataFolder.isValidDatabaseName(name) else { return false }
        if state.withLock({ $0.open[name] != nil || $0.opening[name] != nil }) { return true }
        return try await log.databaseExists(named: name)
    }

    /// A replica stays open: it follows the shared log for as long as the node runs (the
    /// databases are those an admin created, so they are bounded by the cluster's owner).
    public func closeIdleDatabases(
        unusedFor idle: Int64, if canClose: (Database) -> Bool, willClose: (Database) -> Void
    ) -> [String] {
        []
    }

    /// The last log position each open database applied.
    public func appliedPositions() -> [String: Int64] {
        openDatabases().compactMapValues(\.appliedPosition)
    }

    /// Asks every open database to look for new records.
    public func pokeAll() {
        for database in openDatabases().values { database.poke() }
    }

    /// Runs the replication of every database opened, until ``close()``.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await database in opened {
                group.addTask { await database.runReplication() }
            }
        }
    }

    public func close() {
        let open = state.withLock { state -> [Database] in
            state.closed = true
            return Array(state.open.values)
        }
        for database in open { database.close() }
        announceOpened.finish()
    }
}
