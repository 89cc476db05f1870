/// Where a server's databases come from: a local ``DataFolder`` (one node, SQLite), or a
/// cluster's shared log (every node a replica; see HearthCluster).
public protocol DatabaseProvider: Sendable {
    /// The commits and setting changes of every database it opens, as they happen: made with
    /// the provider and handed to each database when it is opened (see ``DatabaseEvents``).
    var events: DatabaseEvents { get }

    /// The database called `name`, opened (and created) on first use.
    /// - Throws: `notFound` for a name that is not valid, or the storage's failure.
    func database(named name: String) async throws -> Database

    /// The database called `name` if it can be had without waiting (a local folder opens it
    /// at once); nil while a replica is still loading, which this call starts.
    /// - Throws: as ``database(named:)``.
    func databaseIfReady(named name: String) throws -> Database?

    /// Names of the databases that hold data.
    func databaseNames() async throws -> [String]

    /// The databases opened so far, by name.
    func openDatabases() -> [String: Database]

    /// True when the database `name` is open (cheap: asked on every request).
    func isOpen(named name: String) -> Bool

    /// The database `name` if it is open, handed out as ``database(named:)`` hands it out (a
    /// local folder notes it was used); nil otherwise, and nothing is opened. One lock taken:
    /// asked on every request.
    func openDatabase(named name: String) -> Database?

    /// The number of open databases.
    var openCount: Int { get }

    /// True when a database called `name` exists: it is open, or it was created before (a
    /// local folder has its folder; a cluster's log has records or a snapshot of it).
    func databaseExists(named name: String) async throws -> Bool

    /// Closes the open databases not handed out for `idle` milliseconds that `canClose` agrees to;
    /// `canClose` and `willClose` (to forget what was attached to it) run under the provider's
    /// lock, so none is handed out or opened again meanwhile. The next use opens them again.
    /// Returns their names (none for a provider that keeps its databases open).
    func closeIdleDatabases(
        unusedFor idle: Int64, if canClose: (Database) -> Bool, willClose: (Database) -> Void
    ) -> [String]

    /// Finishes pending work and closes every open database.
    func close()
}

extension DataFolder: DatabaseProvider {
    /// A local folder has no state to wait for: the database, opened if needed.
    public func databaseIfReady(named name: String) throws -> Database? {
        try database(named: name)
    }
}
