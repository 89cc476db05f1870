import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// The data folder: one process at a time, databases by name.
@Suite("Data folder")
struct DataFolderTests {
    @Test func secondOpenIsRefusedWhileTheFirstIsAlive() throws {
        let directory = try TemporaryDirectory(prefix: "hearth-folder")
        defer { directory.remove() }
        var first: DataFolder? = try DataFolder(url: directory.url, logger: quietLogger)
        let error = #expect(throws: StoreError.self) {
            _ = try DataFolder(url: directory.url, logger: quietLogger)
        }
        #expect(error?.message.contains("in use by another Hearth process") == true, "\(String(describing: error))")
        #expect(error?.message.contains(directory.url.path) == true, "the error names the folder")
        // Still refused on a second try: the failed attempt did not disturb the lock.
        #expect(throws: StoreError.self) { _ = try DataFolder(url: directory.url, logger: quietLogger) }
        withExtendedLifetime(first) {}

        first = nil
        let second = try DataFolder(url: directory.url, logger: quietLogger)
        #expect(second.url == directory.url)
        withExtendedLifetime(second) {}
    }

    @Test func lockIsReleasedEvenWithOpenDatabases() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-folder")
        defer { directory.remove() }
        do {
            let folder = try DataFolder(url: directory.url, logger: quietLogger)
            let database = try folder.database(named: "main")
            try await database.write(set("/a", "1"))
            folder.close()
        }
        let again = try DataFolder(url: directory.url, logger: quietLogger)
        #expect(try again.database(named: "main").value(at: try path("/a")) == .int(1))
    }

    @Test func databasesAreOpenedOnceByNameAndListed() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-folder")
        defer { directory.remove() }
        let folder = try DataFolder(url: directory.url, logger: quietLogger)
        let first = try folder.database(named: "alpha")
        #expect(try folder.database(named: "alpha") === first)
        let other = try folder.database(named: "beta-2")
        #expect(other !== first)
        try await first.write(set("/x", #""in alpha""#))
        #expect(other.value(at: try path("/x")).isNull, "databases are separate")
        #expect(folder.databaseNames() == ["alpha", "beta-2"])

        let error = #expect(throws: HearthError.self) { try folder.database(named: "Not_Valid") }
        #expect(error?.code == .notFound)
        #expect(error?.message == "Database name Not_Valid is not valid.")
        #expect(folder.databaseNames() == ["alpha", "beta-2"], "a refused name creates nothing")
    }

    @Test(arguments: [
        ("default", true), ("a", true), ("my-db-1", true), ("0", true), ("-", true),
        (String(repeating: "a", count: 63), true),
        ("", false), (String(repeating: "a", count: 64), false), ("Upper", false), ("under_score", false),
        ("dot.name", false), ("a b", false), ("slash/name", false), ("..", false), ("caf\u{e9}", false),
        ("ns?x", false),
    ])
    func databaseNames(name: String, valid: Bool) {
        #expect(DataFolder.isValidDatabaseName(name) == valid)
    }
}
