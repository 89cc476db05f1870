import Foundation
import HearthCore
import HearthStore

/// The backups in a server's backup folder (`--backup-dir`), for the console: each one's time,
/// size, contents and whether every file still matches its manifest; and one database's value at a path
/// as a backup holds it, for restoring that path while the server runs.
///
/// A backup is only read: its databases are copied to a temporary folder and rebuilt there
/// (snapshot + log), so SQLite never opens, and never adds a file to, the backup itself.
public struct BackupCatalog: Sendable {
    /// One backup folder.
    public struct Listing: Sendable, Encodable, Equatable {
        /// The folder's name (`hearth-backup-<time>`).
        public var name: String
        /// When it was made (ms since the epoch); nil when its manifest cannot be read.
        public var startedAt: Int64?
        /// When it finished (ms since the epoch); nil when its manifest cannot be read.
        public var finishedAt: Int64?
        /// Its size: the manifest's total, or what the folder holds when there is no manifest.
        public var bytes: Int64
        /// The databases it holds, by name.
        public var databases: [String]
        /// True when it holds the server's functions folder too.
        public var functions: Bool
        /// True when every file matches the manifest's size and SHA-256.
        public var verified: Bool
        /// Why it cannot be restored, in words, when it is not verified.
        public var problem: String?
    }

    /// The folder holding the backups.
    public let folder: URL
    /// Checks already made, when the catalog is asked again and again (the console's list).
    let cache: BackupCheckCache?

    /// The backups in `folder`, checked again on every call.
    public init(folder: URL) {
        self.init(folder: folder, cache: nil)
    }

    /// The backups in `folder`; `cache` remembers checks of backups that did not change.
    public init(folder: URL, cache: BackupCheckCache?) {
        self.folder = folder.standardizedFileURL
        self.cache = cache
    }

    /// The backups, newest first (by name: the schedule's names sort by time). Folders still
    /// being written (`.partial`) are left out. Every file of every backup is checked (with a
    /// cache, again only when a file's size or modification time changed).
    public func list() -> [Listing] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".partial") }
            .filter { name in
                var directory: ObjCBool = false
                return FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &directory)
                    && directory.boolValue
            }
            .sorted(by: >)
        return names.map(listing(named:))
    }

    /// The backup folder `name`, checked against its manifest.
    public func listing(named name: String) -> Listing {
        let url = folder.appendingPathComponent(name)
        let manifest = try? BackupManifest.read(from: url)
        var listing = Listing(
            name: name, startedAt: manifest?.startedAt, finishedAt: manifest?.finishedAt,
            bytes: manifest?.totalBytes ?? Self.size(of: url), databases: manifest?.databases.map(\.name) ?? [],
            functions: manifest?.functions != nil, verified: false, problem: nil)
        let check = { try BackupRestore(backup: url, clock: { 0 }).verify() }
        if let cache {
            listing.problem = cache.problem(of: url) { _ = try check() }
        } else {
            do {
                _ = try check()
            } catch {
                listing.problem = "\(error)"
            }
        }
        listing.verified = listing.problem == nil
        return listing
    }

    /// The backup folder named `name`.
    /// - Throws: ``BackupError`` when the name is not one of this folder's backups.
    func backup(named name: String) throws -> URL {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.hasSuffix(".partial") else {
            throw BackupError("'\(name)' is not a backup name")
        }
        let url = folder.appendingPathComponent(name)
        var directory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &directory), directory.boolValue else {
            throw BackupError("there is no backup named \(name) in \(folder.path)")
        }
        return url
    }

    /// Database `database`'s value at `path` as backup `name` holds it (null where it held
    /// nothing), after checking every file of the backup against its manifest.
    /// - Parameter scratch: a folder for the temporary copy (removed afterwards).
    /// - Throws: ``BackupError`` for an unknown, damaged or unfinished backup or a database
    ///   it does not hold; the store's errors when its files cannot be read.
    public func value(inBackup name: String, database: String, at path: Path, scratch: URL) throws -> Node {
        let url = try backup(named: name)
        let manifest = try BackupRestore(backup: url, clock: { 0 }).verify()
        guard manifest.databases.contains(where: { $0.name == database }) else {
            throw BackupError("backup \(name) holds no database named \(database)")
        }
        let copy = scratch.appendingPathComponent("backup-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: copy) }
        let source = url.appendingPathComponent("databases").appendingPathComponent(database)
        for file in ["log.sqlite", "snapshots.sqlite"] {
            let from = source.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: from.path) else { continue }
            try FileManager.default.copyItem(at: from, to: copy.appendingPathComponent(file))
        }
        let history = try DatabaseHistory(folder: copy)
        guard let range = try history.range() else { return .null }
        return try history.tree(at: range.latestSequence).child(at: path)
    }

    /// The bytes of the files under `url` (for a folder without a readable manifest).
    static func size(of url: URL) -> Int64 {
        guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
        var total: Int64 = 0
        for case let file as URL in enumerator {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}
