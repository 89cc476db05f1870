import Crypto
import Foundation
import HearthFiles
import HearthStore

/// Makes a consistent copy of a single node's data folder while its server keeps running
/// (`hearth backup`, and `hearth serve --backup-every`).
///
/// - Every SQLite file (each database's log and snapshots, the accounts, the file metadata,
///   the onDisconnect queue) is copied with SQLite's online backup (``SQLiteOnlineCopy``): as of
///   one transaction, without blocking writes. A database's log is copied before its
///   snapshots: a snapshot is stored before the log it covers is dropped, so the later copy of
///   the snapshots always reaches back to where the earlier copy of the log starts.
/// - Stored files' content is copied after their metadata, only the content the copied
///   metadata points at; an object deleted meanwhile is left out of the copy (see
///   ``SQLiteFileMetadata/reconcileBackupCopy(at:copyContent:)``).
/// - Other files (keys, the admin token) are copied as they are.
/// - With a functions folder (`--functions`), its source goes to `functions/` after the data
///   (``FunctionsFolderCopy`` says what is left out). The functions' undelivered events are
///   not in it but in the SQLite files above, copied with the writes that made them.
///
/// Everything goes to `<destination>.partial` and is renamed to `destination` once the manifest
/// is written, so a folder with a manifest is a finished backup. Each database is copied at
/// its own moment; there is no moment common to all of them (as in Firebase, writes to
/// different databases are not ordered with each other).
public struct DataFolderBackup: Sendable {
    /// How far a backup is.
    public struct Progress: Sendable, Equatable {
        /// Bytes copied so far.
        public var doneBytes: Int64
        /// Grows once the stored files' content is known.
        public var totalBytes: Int64
        /// The file being copied, by its path in the backup.
        public var item: String
    }

    /// The data folder.
    let source: URL
    /// Where the stored files are kept when not in `files/` of the data folder (`--files-dir`).
    let filesDirectory: URL?
    /// The functions folder to copy too (`--functions`), or nil.
    let functionsFolder: URL?
    let functionsLimits: FunctionsFolderCopy.Limits
    /// The clock, in milliseconds since the epoch.
    let clock: @Sendable () -> Int64

    /// Backs up the data folder `source`; `filesDirectory` is the stored files' folder when not
    /// `source/files`; `functionsFolder` is the server's functions folder, copied too; `clock`
    /// is milliseconds since 1970.
    public init(source: URL, filesDirectory: URL? = nil, functionsFolder: URL? = nil, clock: @escaping @Sendable () -> Int64) {
        self.init(source: source, filesDirectory: filesDirectory, functionsFolder: functionsFolder, functionsLimits: .init(), clock: clock)
    }

    init(
        source: URL, filesDirectory: URL?, functionsFolder: URL?, functionsLimits: FunctionsFolderCopy.Limits,
        clock: @escaping @Sendable () -> Int64
    ) {
        self.source = source.standardizedFileURL
        self.filesDirectory = filesDirectory?.standardizedFileURL
        self.functionsFolder = functionsFolder?.standardizedFileURL
        self.functionsLimits = functionsLimits
        self.clock = clock
    }

    /// Writes the backup to `destination`, which must not exist yet.
    @discardableResult
    public func write(to destination: URL, progress: @escaping (Progress) -> Void = { _ in }) throws -> BackupManifest {
        let destination = destination.standardizedFileURL
        guard FileManager.default.fileExists(atPath: source.appendingPathComponent("databases").path)
            || FileManager.default.fileExists(atPath: source.appendingPathComponent("LOCK").path)
        else {
            throw BackupError("\(source.path) is not a Hearth data folder")
        }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw BackupError("\(destination.path) already exists")
        }
        if destination.path.hasPrefix(source.path + "/") {
            throw BackupError("the backup cannot go inside the data folder it copies")
        }
        let functions = try functionsFolder.map { try FunctionsFolderCopy(folder: $0, limits: functionsLimits) }
        // The destination does not exist yet: its folder's links are resolved.
        let resolvedDestination = destination.deletingLastPathComponent().resolvingSymlinksInPath()
            .appendingPathComponent(destination.lastPathComponent)
        if let functions, resolvedDestination.path.hasPrefix(functions.folder.path + "/") {
            throw BackupError("the backup cannot go inside the functions folder it copies")
        }
        if let functions, functions.folder.path == source.resolvingSymlinksInPath().path {
            throw BackupError("the functions folder cannot be the data folder")
        }
        // Counted (and refused when too large) before anything is written.
        let functionsInventory = try functions?.inventory(skipping: [source] + (filesDirectory.map { [$0] } ?? []))
        let started = clock()
        let partial = destination.appendingPathExtension("partial")
        try? FileManager.default.removeItem(at: partial)
        try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        let items = try inventory()
        var tracker = ProgressTracker(
            total: items.reduce(0) { $0 + $1.estimatedBytes } + (functionsInventory?.totalBytes ?? 0), report: progress)
        var files: [BackupManifest.File] = []
        var objects = 0
        for item in items {
            let target = partial.appendingPathComponent(item.path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            tracker.item = item.path
            switch item.kind {
            case .sqlite:
                let before = tracker.done
                try SQLiteOnlineCopy.copy(from: item.url, to: target) { step in
                    tracker.set(done: before + Int64(step.copiedPages * step.pageSize))
                }
                tracker.set(done: before + item.estimatedBytes)
                if item.isFileMetadata {
                    objects = try copyContent(metadataCopy: target, backup: partial, files: &files, tracker: &tracker)
                }
                files.append(try BackupCopying.describe(target, as: item.path))
            case .plain:
                let copied = try BackupCopying.copy(from: item.url, to: target)
                files.append(BackupManifest.File(path: item.path, bytes: copied.bytes, sha256: copied.sha256))
                tracker.add(item.estimatedBytes)
            }
        }
        if let functions, let functionsInventory {
            for file in functionsInventory.files {
                tracker.item = "\(FunctionsFolderCopy.backupFolder)/\(file.path)"
                if let copied = try functions.copy(file, into: partial) { files.append(copied) }
                tracker.add(file.bytes)
            }
        }

        let manifest = BackupManifest(
            format: BackupManifest.format(holdingFunctions: functions != nil), startedAt: started, finishedAt: clock(),
            source: source.path, databases: try databases(in: partial), objects: objects, files: files.sorted { $0.path < $1.path },
            functions: functions.map { .init(source: $0.folder.path, linksLeftOut: functionsInventory?.linksLeftOut ?? []) })
        let manifestURL = partial.appendingPathComponent(BackupManifest.fileName)
        try manifest.encoded().write(to: manifestURL)
        try SQLiteOnlineCopy.syncFile(at: manifestURL)
        try FileManager.default.moveItem(at: partial, to: destination)
        return manifest
    }

    // MARK: - What to copy

    struct Item {
        enum Kind { case sqlite, plain }
        var url: URL
        /// The path inside the backup.
        var path: String
        var kind: Kind
        var estimatedBytes: Int64
        var isFileMetadata: Bool
    }

    /// Every file to copy, in the order that keeps each database consistent.
    func inventory() throws -> [Item] {
        var items: [Item] = []
        let filesFolder = (filesDirectory ?? source.appendingPathComponent("files")).standardizedFileURL
        items += try walk(source, prefix: "", skipping: [filesFolder] + (functionsFolder.map { [$0] } ?? []))
        items += try walk(filesFolder, prefix: "files/", skipping: []).filter { item in
            !item.path.hasPrefix("files/blobs/") && !item.path.hasPrefix("files/tmp/") && !item.path.hasPrefix("files/uploads/")
        }
        return items.sorted { ($0.rank, $0.path) < ($1.rank, $1.path) }
    }

    /// The files under `folder`, with `prefix` before their path, leaving out the `skipped` folders.
    private func walk(_ folder: URL, prefix: String, skipping skipped: [URL]) throws -> [Item] {
        guard let enumerator = FileManager.default.enumerator(
            at: folder, includingPropertiesForKeys: [.isRegularFileKey, .isDirectoryKey, .fileSizeKey])
        else { return [] }
        var items: [Item] = []
        let base = folder.standardizedFileURL.path
        for case let url as URL in enumerator {
            let standardized = url.standardizedFileURL
            if skipped.contains(where: { $0.standardizedFileURL.path == standardized.path }) {
                enumerator.skipDescendants()
                continue
            }
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true else { continue }
            let name = url.lastPathComponent
            if name == "LOCK" || name.hasSuffix("-wal") || name.hasSuffix("-shm") || name.hasSuffix("-journal")
                || name.hasSuffix(".partial")
            {
                continue
            }
            let relative = prefix + String(standardized.path.dropFirst(base.count + 1))
            let isSQLite = name.hasSuffix(".sqlite")
            var bytes = Int64(values.fileSize ?? 0)
            if isSQLite, let wal = try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int64 {
                bytes += wal
            }
            items.append(Item(
                url: standardized, path: relative, kind: isSQLite ? .sqlite : .plain, estimatedBytes: bytes,
                isFileMetadata: relative == "files/files.sqlite"))
        }
        return items
    }

    /// Copies the content the copied file metadata points at, into `files/blobs/`.
    private func copyContent(
        metadataCopy: URL, backup: URL, files: inout [BackupManifest.File], tracker: inout ProgressTracker
    ) throws -> Int {
        let blobs = (filesDirectory ?? source.appendingPathComponent("files")).appendingPathComponent("blobs")
        let target = backup.appendingPathComponent("files/blobs")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        var copied: [BackupManifest.File] = []
        let count = try SQLiteFileMetadata.reconcileBackupCopy(at: metadataCopy.path) { names in
            var sizes: [String: Int64] = [:]
            for name in names {
                sizes[name] = (try? FileManager.default.attributesOfItem(atPath: blobs.appendingPathComponent(name).path)[.size]
                    as? Int64) ?? 0
            }
            tracker.total += sizes.values.reduce(0, +)
            var missing: Set<String> = []
            for name in names {
                guard Self.isBlobName(name) else {
                    missing.insert(name)
                    continue
                }
                tracker.item = "files/blobs/\(name)"
                let source = blobs.appendingPathComponent(name)
                do {
                    let file = try BackupCopying.copy(from: source, to: target.appendingPathComponent(name))
                    copied.append(BackupManifest.File(path: "files/blobs/\(name)", bytes: file.bytes, sha256: file.sha256))
                } catch {
                    // Deleted since the metadata was copied: the object is left out. Any
                    // other failure fails the backup.
                    guard !FileManager.default.fileExists(atPath: source.path) else { throw error }
                    try? FileManager.default.removeItem(at: target.appendingPathComponent(name))
                    missing.insert(name)
                }
                tracker.add(sizes[name] ?? 0)
            }
            return missing
        }
        files += copied
        return count
    }

    /// Blob names are Hearth's own (UUIDs): anything else would escape the folder.
    static func isBlobName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-")
        }
    }

    /// The databases a backup holds and the last write of each.
    private func databases(in backup: URL) throws -> [BackupManifest.DatabaseEntry] {
        let folder = backup.appendingPathComponent("databases")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter(DataFolder.isValidDatabaseName).sorted()
        return try names.map { name in
            let history = try DatabaseHistory(folder: folder.appendingPathComponent(name))
            return BackupManifest.DatabaseEntry(name: name, sequence: try history.range()?.latestSequence ?? 0)
        }
    }
}

extension DataFolderBackup.Item {
    /// Copy order: each database's log before its snapshots, then everything else.
    var rank: Int {
        if path.hasSuffix("/log.sqlite") { return 0 }
        if path.hasSuffix("/snapshots.sqlite") { return 1 }
        return 2
    }
}

/// Adds up a backup's progress and reports it.
struct ProgressTracker {
    var total: Int64
    var done: Int64 = 0
    var item = ""
    let report: (DataFolderBackup.Progress) -> Void

    init(total: Int64, report: @escaping (DataFolderBackup.Progress) -> Void) {
        self.total = total
        self.report = report
    }

    mutating func add(_ bytes: Int64) {
        set(done: done + bytes)
    }

    mutating func set(done: Int64) {
        self.done = done
        total = max(total, done)
        report(DataFolderBackup.Progress(doneBytes: done, totalBytes: total, item: item))
    }
}

/// Plain file copies for backups and restores: streamed, hashed, synced.
enum BackupCopying {
    static let chunkSize = 1 << 20

    /// Copies `source` to `destination` (created), returning its size and SHA-256.
    static func copy(from source: URL, to destination: URL) throws -> (bytes: Int64, sha256: String) {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw BackupError("cannot create \(destination.path)")
        }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        let read = try hashed(source) { chunk in try output.write(contentsOf: chunk) }
        try output.synchronize()
        return read
    }

    /// The manifest entry of a file already in place.
    static func describe(_ url: URL, as path: String) throws -> BackupManifest.File {
        let read = try hashed(url) { _ in }
        return BackupManifest.File(path: path, bytes: read.bytes, sha256: read.sha256)
    }

    /// Reads `url` in chunks, handing each to `body`: its size and SHA-256.
    private static func hashed(_ url: URL, _ body: (Data) throws -> Void) throws -> (bytes: Int64, sha256: String) {
        let input = try FileHandle(forReadingFrom: url)
        defer { try? input.close() }
        var hash = SHA256()
        var bytes: Int64 = 0
        while let chunk = try input.read(upToCount: chunkSize), !chunk.isEmpty {
            hash.update(data: chunk)
            try body(chunk)
            bytes += Int64(chunk.count)
        }
        return (bytes, hash.finalize().map { String(format: "%02x", $0) }.joined())
    }
}
