import Foundation
import HearthStore
import HearthTesting
import Testing

/// A single node's database over its SQLite log, in a temporary folder: every
/// ``DatabaseBehaviour`` (the checks a replica of a cluster's shared log passes too).
@Suite struct LocalDatabaseBehaviourTests {
    @Test(arguments: DatabaseBehaviour.allCases)
    func behaviour(_ behaviour: DatabaseBehaviour) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-database-behaviour")
        defer { directory.remove() }
        let database = try Database(name: "test", folder: directory.url.appendingPathComponent("db"), logger: quietLogger)
        defer { database.close() }
        try await behaviour.check(database)
    }
}
