import Foundation
import HearthCore
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder that holds every database of one Hearth server, locked so that only one process
/// uses it at a time. Databases are opened on first use and live under `databases/<name>/`.
public final class DataFolder: Sendable {
    /// The folder's location.
    public let url: URL
    let options: DatabaseOptions
    let logger: Logger
    /// The commits and setting changes of the databases it opens.
    public let events = DatabaseEvents()
    private let lockDescriptor: Int32
    /// The open databases, with when each was last handed out (ms, `options.clock`).
    private let databases = Mutex<[String: (database: Database, lastUsed: Int64)]>([:])

    /// Opens the folder (creating it if needed) and takes its lock.
    /// - Throws: ``StoreError`` when another process holds the folder.
    public init(url: URL, options: DatabaseOptions = DatabaseOptions(), logger: Logger) throws {
        // A new folder is its owner's alone: it holds every database, the accounts and the keys.
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let lockPath = url.appendingPathComponent("LOCK").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw StoreError("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            closeDescriptor(descriptor)
            throw StoreError("the data folder \(url.path) is in use by another Hearth process")
        }
        self.url = url
        self.options = options
        self.logger = logger
        self.lockDescriptor = descriptor
    }

    deinit {
        flock(lockDescriptor, LOCK_UN)
        closeDescriptor(lockDescriptor)
    }

    /// True for names Hearth accepts for databases: 1–63 of `a-z`, `0-9` and `-`, as Firebase
    /// database names are.
    public static func isValidDatabaseName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 63 else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-")
        }
    }

    /// The database called `name`, opened (and created) on first use.
    public func database(named name: String) throws -> Database {
        guard Self.isValidDatabaseName(name) else {
            throw HearthError(.notFound, "Database name \(name) is not valid.")
        }
        let now = options.clock()
        return try databases.withLock { open in
            if let database = open[name]?.database {
                open[name]?.lastUsed = now
                return database
            }
            let folder = url.appendingPathComponent("databases").appendingPathComponent(name)
            let isNew = !FileManager.default.fileExists(atPath: folder.path)
            do {
                let database = try Database(name: name, folder: folder, options: options, events: events, logger: logger)
                open[name] = (database, now)
                return database
            } catch {
                // A database that could not be created is not left half made (it would then
                // "exist"); one that exists stays as it is.
                if isNew { try? FileManager.default.removeItem(at: folder) }
                logger.error("could not open a database", metadata: ["database": "\(name)", "error": "\(error)"])
                throw HearthError(.unavailable, "The database cannot be opened now (the server may be out of file descriptors). Try again later.")
            }
        }
    }

    /// The database `name` if it is open, noted as used now; nil otherwise (nothing is opened).
    public func openDatabase(named name: String) -> Database? {
        let now = options.clock()
        return databases.withLock { open in
            guard let index = open.index(forKey: name) else { return nil }
            open.values[index].lastUsed = now
            return open.values[index].database
        }
    }

    /// True when the database `name` is open.
    public func isOpen(named name: String) -> Bool {
        databases.withLock { $0[name] != nil }
    }

    /// The number of open databases.
    public var openCount: Int { databases.withLock(\.count) }

    /// True when the database `name` is open or has a folder here.
    public func databaseExists(named name: String) -> Bool {
        guard Self.isValidDatabaseName(name) else { return false }
        if databases.withLock({ $0[name] != nil }) { return true }
        let folder = url.appendingPathComponent("databases").appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Closes the open databases not handed out for `idle` milliseconds (by `options.clock`)
    /// that `canClose` agrees to: `canClose` and `willClose` run under the lock that ``database(named:)`` takes, so
    /// none is handed out, and no new instance of it opened, meanwhile. Their pending commits
    /// finish and they are snapshotted; the next use opens them again. Returns their names.
    public func closeIdleDatabases(
        unusedFor idle: Int64, if canClose: (Database) -> Bool, willClose: (Database) -> Void
    ) -> [String] {
        let closing = databases.withLock { open -> [Database] in
            let cutoff = options.clock() - idle
            let closing = open.values.filter { $0.lastUsed < cutoff && canClose($0.database) }.map(\.database)
            for database in closing {
                open[database.name] = nil
                willClose(database)
            }
            return closing
        }
        for database in closing { database.close() }
        return closing.map(\.name).sorted()
    }

    /// Names of the databases stored in the folder.
    public func databaseNames() -> [String] {
        let folder = url.appendingPathComponent("databases")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter(Self.isValidDatabaseName).sorted()
    }

    /// The databases opened so far, by name.
    public func openDatabases() -> [String: Database] {
        databases.withLock { $0.mapValues(\.database) }
    }

    /// Finishes pending commits and snapshots every open database.
    public func close() {
        for database in databases.withLock({ $0.values.map(\.database) }) { database.close() }
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}
