/// Where a server's databases come from: a local ``DataFolder`` (one node, SQLite), or a
/// cluster's shared log (every node a replica; see HearthCluster).
public protocol DatabaseProvider: Sendable {
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

    /// Finishes pending work and closes every open database.
    func close()
}

extension DataFolder: DatabaseProvider {
    public func databaseIfReady(named name: String) throws -> Database? {
        try database(named: name)
    }
}
