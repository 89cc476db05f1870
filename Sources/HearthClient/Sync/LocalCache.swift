import Foundation
import GRDB
import HearthCore

/// The device's copy of a database, in one SQLite file (GRDB, WAL): the server data of the
/// locations listened to, which views of it are complete, and the queue of writes not yet
/// acknowledged. Writes are saved before a write call returns, so they survive the app being
/// killed; server data is saved behind, in batches, since the server can always send it again.
///
/// Server data is kept as rows of (path, value): a value written at a path replaces every row
/// below it; reading a location composes the rows above it and below it, deeper rows last.
/// Not thread-safe by itself: ``SyncEngine`` calls it under its lock (GRDB serializes the file);
/// the ``SyncCore`` never calls it: it returns what to read and save.
final class LocalCache: Sendable {
    /// One saved write, as it was made.
    struct SavedWrite: Sendable {
        var id: Int64
        var path: Path
        var change: PendingWrite.Change
        var local: PendingWrite.Change
    }

    private let queue: DatabaseQueue
    /// The most server data kept, in bytes of JSON, before the least recently used views go.
    let sizeLimit: Int

    /// Milliseconds since the epoch: when a view was last used, for trimming.
    private let clock: @Sendable () -> Int64

    /// Opens (creating if needed) the cache at `url`.
    init(url: URL, sizeLimit: Int = 10 << 20, clock: @escaping @Sendable () -> Int64 = Database.systemClock) throws {
        self.clock = clock
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        // Another process (or a second Database on the same file) may hold a lock briefly.
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        queue = try DatabaseQueue(path: url.path, configuration: configuration)
        self.sizeLimit = sizeLimit
        try queue.inDatabase { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("cache-1") { db in
            try db.execute(sql: """
                CREATE TABLE server_data (path TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
                CREATE TABLE windows (path TEXT NOT NULL, query TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (path, query));
                CREATE TABLE complete_views (path TEXT NOT NULL, query TEXT NOT NULL, last_use INTEGER NOT NULL, PRIMARY KEY (path, query));
                CREATE TABLE pending_writes (id INTEGER PRIMARY KEY NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, sent BLOB NOT NULL, local BLOB NOT NULL);
                """)
        }
        try migrator.migrate(queue)
    }

    // MARK: - Pending writes

    /// Every saved write, oldest first.
    func savedWrites() throws -> [SavedWrite] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, path, kind, sent, local FROM pending_writes ORDER BY id").compactMap { row in
                let kind: String = row["kind"]
                let path = Self.path(row["path"])
                guard let sent = Self.change(kind, row["sent"]), let local = Self.change(kind, row["local"]) else { return nil }
                return SavedWrite(id: row["id"], path: path, change: sent, local: local)
            }
        }
    }

    func saveWrite(_ write: PendingWrite) throws {
        let kind: String, sent: [UInt8], local: [UInt8]
        switch (write.change, write.local) {
        case (.set(let value), .set(let resolved)):
            (kind, sent, local) = ("set", Self.encode(value), Self.encode(resolved))
        case (.merge(let children), .merge(let resolved)):
            (kind, sent, local) = ("merge", Self.encode(children), Self.encode(resolved))
        default:
            return
        }
        try queue.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO pending_writes (id, path, kind, sent, local) VALUES (?, ?, ?, ?, ?)",
                arguments: [write.id, Self.text(write.path), kind, Data(sent), Data(local)])
        }
    }

    func removeWrite(_ id: Int64) throws {
        try queue.write { db in try db.execute(sql: "DELETE FROM pending_writes WHERE id = ?", arguments: [id]) }
    }

    // MARK: - Server data

    /// What the cache holds for the view `key`: its data if it was complete when last seen.
    func completeData(for key: ViewKey) throws -> Node? {
        try queue.write { db -> Node? in
            if key.isDefault {
                // Complete if this location or one above was listened to plainly.
                let ancestors = Self.ancestors(of: key.path).map(Self.text)
                let marks = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM complete_views WHERE query = 'default' AND path IN (\(ancestors.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(ancestors)) ?? 0
                guard marks > 0 else { return nil }
                try touch(db, key)
                return try Self.compose(db, at: key.path)
            }
            guard try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM complete_views WHERE path = ? AND query = ?",
                arguments: [Self.text(key.path), key.identifier]) ?? 0 > 0,
                let bytes = try Data.fetchOne(
                    db, sql: "SELECT value FROM windows WHERE path = ? AND query = ?", arguments: [Self.text(key.path), key.identifier])
            else { return nil }
            try touch(db, key)
            return Self.decode(Array(bytes))
        }
    }

    /// Saves server data and completeness, in one transaction.
    func save(_ batch: [CacheUpdate]) throws {
        guard !batch.isEmpty else { return }
        try queue.write { db in
            for update in batch {
                switch update {
                case .value(let path, let node):
                    let text = Self.text(path)
                    try db.execute(
                        sql: "DELETE FROM server_data WHERE path >= ? AND path < ?", arguments: [text, Self.upperBound(text)])
                    try db.execute(
                        sql: "INSERT INTO server_data (path, value) VALUES (?, ?)", arguments: [text, Data(Self.encode(node))])
                case .window(let key, let node):
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO windows (path, query, value) VALUES (?, ?, ?)",
                        arguments: [Self.text(key.path), key.identifier, Data(Self.encode(node))])
                case .complete(let key):
                    try touch(db, key)
                }
            }
        }
        try trim()
    }

    /// One change to the saved server data.
    enum CacheUpdate: Sendable {
        /// The server's whole value at a path.
        case value(Path, Node)
        /// A filtered query's selection.
        case window(ViewKey, Node)
        /// A view became complete (or was used).
        case complete(ViewKey)
    }

    /// The bytes of server data kept.
    func size() throws -> Int {
        try queue.read { db in
            let data = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM server_data") ?? 0
            let windows = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM windows") ?? 0
            return data + windows
        }
    }

    /// Drops the least recently used views' data until the cache fits its limit.
    private func trim() throws {
        guard try size() > sizeLimit else { return }
        try queue.write { db in
            let views = try Row.fetchAll(db, sql: "SELECT path, query FROM complete_views ORDER BY last_use")
            var total = try Int.fetchOne(
                db, sql: "SELECT (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM server_data) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM windows)") ?? 0
            // Keep the newest half of the limit's worth, so trimming is rare.
            for view in views where total > sizeLimit / 2 {
                let path: String = view["path"], query: String = view["query"]
                try db.execute(sql: "DELETE FROM complete_views WHERE path = ? AND query = ?", arguments: [path, query])
                if query == "default" {
                    try db.execute(sql: "DELETE FROM server_data WHERE path >= ? AND path < ?", arguments: [path, Self.upperBound(path)])
                } else {
                    try db.execute(sql: "DELETE FROM windows WHERE path = ? AND query = ?", arguments: [path, query])
                }
                total = try Int.fetchOne(
                    db, sql: "SELECT (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM server_data) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM windows)") ?? 0
            }
        }
    }

    private func touch(_ db: GRDB.Database, _ key: ViewKey) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO complete_views (path, query, last_use) VALUES (?, ?, ?)",
            arguments: [Self.text(key.path), key.identifier, clock()])
    }

    /// The value at `path` from the rows above it (shallowest first) and below it.
    private static func compose(_ db: GRDB.Database, at path: Path) throws -> Node {
        let text = Self.text(path)
        let ancestors = Self.ancestors(of: path).map(Self.text)
        var rows = try Row.fetchAll(
            db, sql: "SELECT path, value FROM server_data WHERE path IN (\(ancestors.map { _ in "?" }.joined(separator: ",")))",
            arguments: StatementArguments(ancestors))
        rows += try Row.fetchAll(
            db, sql: "SELECT path, value FROM server_data WHERE path > ? AND path < ?", arguments: [text, upperBound(text)])
        var tree = Node.null
        let decoded = rows.map { (Self.path($0["path"]), Array(($0["value"] as Data))) }.sorted { $0.0.count < $1.0.count }
        for (rowPath, bytes) in decoded {
            tree = tree.setting(decode(bytes), at: rowPath)
        }
        return tree.child(at: path)
    }

    // MARK: - Encoding

    /// `/a/b/`: every path ends in `/`, so the rows below one are a range of strings.
    static func text(_ path: Path) -> String {
        "/" + path.keys.map { $0.string + "/" }.joined()
    }

    static func path(_ text: String) -> Path {
        Path(keys: Path.keys(splitting: text))
    }

    /// The first string after every path below `text` (`/` is followed by `0`).
    private static func upperBound(_ text: String) -> String {
        String(text.dropLast()) + "0"
    }

    private static func ancestors(of path: Path) -> [Path] {
        (0...path.count).map { Path(keys: Array(path.keys.prefix($0))) }
    }

    private static func encode(_ node: Node) -> [UInt8] {
        JSONWriter.bytes(node, format: .init(export: true))
    }

    private static func encode(_ children: [(path: Path, value: Node)]) -> [UInt8] {
        var entries: [(ChildKey, Node)] = []
        for child in children { entries.append((ChildKey(child.path.keys.map(\.string).joined(separator: "/")), child.value)) }
        // Nulls (deletions) must stay: written by hand.
        let body = entries.map { JSONWriter.string(.string($0.0.string)) + ":" + JSONWriter.string($0.1, format: .init(export: true)) }
        return Array(("{" + body.joined(separator: ",") + "}").utf8)
    }

    private static func decode(_ bytes: [UInt8]) -> Node {
        (try? JSONParser.parse(bytes).node) ?? .null
    }

    private static func change(_ kind: String, _ data: Data) -> PendingWrite.Change? {
        let bytes = Array(data)
        if kind == "set" { return .set(decode(bytes)) }
        guard let entries = try? JSONParser.parseUpdate(bytes) else { return nil }
        return .merge(entries.map { ($0.path, $0.value.node) })
    }
}
