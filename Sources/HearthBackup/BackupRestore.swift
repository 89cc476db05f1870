import Foundation
import HearthStore
import Logging

/// Brings a backup made by ``DataFolderBackup`` back as a data folder (`hearth restore`).
///
/// Every file is checked against the manifest's size and SHA-256 before anything is touched,
/// so a damaged or unfinished backup changes nothing. The folder is assembled beside its
/// destination and renamed into place; a data folder already there is moved aside whole
/// (only when asked), after taking its lock, so a running server's folder is never replaced.
/// The functions folder a backup holds comes back where asked, by the same rules.
public struct BackupRestore: Sendable {
    /// What a restore did.
    public struct Outcome: Sendable {
        /// The manifest of the backup restored.
        public var manifest: BackupManifest
        /// Where the data folder that was replaced went, or nil.
        public var previous: URL?
        /// Where the functions folder that was replaced went, or nil.
        public var previousFunctions: URL?
    }

    /// The backup to restore.
    let backup: URL
    let clock: @Sendable () -> Int64

    /// A restore from the backup folder `backup`; `clock` (milliseconds) names the replaced folder.
    public init(backup: URL, clock: @escaping @Sendable () -> Int64) {
        self.backup = backup.standardizedFileURL
        self.clock = clock
    }

    /// Checks every file of the backup against its manifest.
    /// - Parameter progress: bytes checked and the total.
    /// - Throws: ``BackupError`` naming the first file that is missing or differs.
    @discardableResult
    func verify(progress: (Int64, Int64) -> Void = { _, _ in }) throws -> BackupManifest {
        let manifest = try BackupManifest.read(from: backup)
        var checked: Int64 = 0
        for file in manifest.files {
            guard Self.isSafe(file.path) else { throw BackupError("the manifest names an unsafe path: \(file.path)") }
            let url = backup.appendingPathComponent(file.path)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw BackupError("the backup is missing \(file.path)")
            }
            let found = try BackupCopying.describe(url, as: file.path)
            guard found == file else { throw BackupError("\(file.path) differs from the backup's manifest (damaged?)") }
            checked += file.bytes
            progress(checked, manifest.totalBytes)
        }
        return manifest
    }

    /// Restores into `data`. The folder must not exist or be empty, unless `replacing`: then
    /// the folder there is moved to `<data>.before-restore-<time>` (its server must be stopped).
    /// - Parameters:
    ///   - filesDirectory: where stored files' content goes when not `files/` of `data`.
    ///   - functionsFolder: where the functions folder the backup holds goes; nil leaves it out.
    ///     Like `data`, it must not exist or be empty, unless `replacing`: then it is moved to
    ///     `<folder>.before-restore-<time>`.
    /// - Throws: ``BackupError`` before anything is written, for a damaged backup, a folder
    ///   that holds something, or a functions folder asked of a backup that holds none.
    public func restore(
        into data: URL, filesDirectory: URL? = nil, functionsFolder: URL? = nil, replacing: Bool,
        progress: (Int64, Int64) -> Void = { _, _ in }
    ) throws -> Outcome {
        let data = data.standardizedFileURL
        let manifest = try verify()
        let existing = Self.contents(of: data)
        if !existing.isEmpty && !replacing {
            throw BackupError("\(data.path) already holds data; --force moves it aside first")
        }
        let filesTarget = filesDirectory?.standardizedFileURL
        if let filesTarget, !Self.contents(of: filesTarget).isEmpty {
            throw BackupError("\(filesTarget.path) is not empty")
        }
        let functionsTarget = functionsFolder?.standardizedFileURL
        let existingFunctions = try functionsTarget.map { try Self.checkFunctionsTarget($0, manifest: manifest, data: data) } ?? []
        if let functionsTarget, !existingFunctions.isEmpty && !replacing {
            throw BackupError("\(functionsTarget.path) is not empty; --force moves it aside first")
        }
        let restored = manifest.files.filter { functionsTarget != nil || !manifest.isFunctionsFile($0) }
        let assembling = Self.assemblyFolder(for: data)
        let assemblingFunctions = functionsTarget.map(Self.assemblyFolder(for:))
        for folder in [assembling, assemblingFunctions].compactMap({ $0 }) {
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let total = restored.reduce(0) { $0 + $1.bytes }
        var copied: Int64 = 0
        for file in restored {
            let target: URL
            if let assemblingFunctions, manifest.isFunctionsFile(file) {
                target = assemblingFunctions.appendingPathComponent(String(file.path.dropFirst(FunctionsFolderCopy.backupFolder.count + 1)))
            } else if let filesTarget, file.path.hasPrefix("files/") {
                target = filesTarget.appendingPathComponent(String(file.path.dropFirst("files/".count)))
            } else {
                target = assembling.appendingPathComponent(file.path)
            }
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = try BackupCopying.copy(from: backup.appendingPathComponent(file.path), to: target)
            copied += file.bytes
            progress(copied, total)
        }
        // Taking the data folder's lock proves no server is using it (nor its functions).
        let held = existing.isEmpty ? nil : try DataFolder(url: data, logger: .init(label: "hearth.restore"))
        let previous = try put(assembling, at: data, movingAside: !existing.isEmpty)
        var previousFunctions: URL?
        if let functionsTarget, let assemblingFunctions {
            previousFunctions = try put(assemblingFunctions, at: functionsTarget, movingAside: !existingFunctions.isEmpty)
        }
        withExtendedLifetime(held) {}
        return Outcome(manifest: manifest, previous: previous, previousFunctions: previousFunctions)
    }

    /// What `target` holds, after checking it can take the backup's functions folder.
    private static func checkFunctionsTarget(_ target: URL, manifest: BackupManifest, data: URL) throws -> [String] {
        guard manifest.functions != nil else {
            throw BackupError("the backup holds no functions folder (it was made without --functions)")
        }
        if target.path == data.path || target.path.hasPrefix(data.path + "/") || data.path.hasPrefix(target.path + "/") {
            throw BackupError("the functions folder and the data folder must be apart, neither inside the other")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw BackupError("\(target.path) is not a folder")
        }
        return contents(of: target)
    }

    /// The names in `folder`; none when it does not exist.
    private static func contents(of folder: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    }

    /// Where a folder is assembled before it is renamed into place: hidden, beside it.
    private static func assemblyFolder(for target: URL) -> URL {
        target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).restoring")
    }

    /// Renames `assembled` to `target`. What is there is moved to `<target>.before-restore-<time>`
    /// (returned) when it holds something, else removed.
    private func put(_ assembled: URL, at target: URL, movingAside holdsSomething: Bool) throws -> URL? {
        var aside: URL?
        if holdsSomething {
            let moved = target.deletingLastPathComponent().appendingPathComponent("\(target.lastPathComponent).before-restore-\(clock())")
            try FileManager.default.moveItem(at: target, to: moved)
            aside = moved
        } else if FileManager.default.fileExists(atPath: target.path) {
            try FileManager.default.removeItem(at: target)
        }
        try FileManager.default.moveItem(at: assembled, to: target)
        return aside
    }

    /// A manifest path stays inside the backup: relative, without `..`.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == ".." || $0 == "." || $0.isEmpty }
    }
}
