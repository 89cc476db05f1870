import Foundation
import HearthStore
import Logging

/// Brings a backup made by ``DataFolderBackup`` back as a data folder (`hearth restore`).
///
/// Every file is checked against the manifest's size and SHA-256 before anything is touched,
/// so a damaged or unfinished backup changes nothing. The folder is assembled beside its
/// destination and renamed into place; a data folder already there is moved aside whole
/// (only when asked), after taking its lock, so a running server's folder is never replaced.
public struct BackupRestore: Sendable {
    /// What a restore did.
    public struct Outcome: Sendable {
        /// The manifest of the backup restored.
        public var manifest: BackupManifest
        /// Where the data folder that was replaced went, or nil.
        public var previous: URL?
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
    /// - Parameter filesDirectory: where stored files' content goes when not `files/` of `data`.
    public func restore(
        into data: URL, filesDirectory: URL? = nil, replacing: Bool, progress: (Int64, Int64) -> Void = { _, _ in }
    ) throws -> Outcome {
        let data = data.standardizedFileURL
        let manifest = try verify()
        var previous: URL?
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: data.path)) ?? []
        if !existing.isEmpty && !replacing {
            throw BackupError("\(data.path) already holds data; --force moves it aside first")
        }
        let filesTarget = filesDirectory?.standardizedFileURL
        if let filesTarget, !((try? FileManager.default.contentsOfDirectory(atPath: filesTarget.path)) ?? []).isEmpty {
            throw BackupError("\(filesTarget.path) is not empty")
        }
        let assembling = data.deletingLastPathComponent().appendingPathComponent(".\(data.lastPathComponent).restoring")
        try? FileManager.default.removeItem(at: assembling)
        try FileManager.default.createDirectory(at: assembling, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var copied: Int64 = 0
        for file in manifest.files {
            let target: URL
            if let filesTarget, file.path.hasPrefix("files/") {
                target = filesTarget.appendingPathComponent(String(file.path.dropFirst("files/".count)))
            } else {
                target = assembling.appendingPathComponent(file.path)
            }
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = try BackupCopying.copy(from: backup.appendingPathComponent(file.path), to: target)
            copied += file.bytes
            progress(copied, manifest.totalBytes)
        }
        if !existing.isEmpty {
            // Taking the folder's lock proves no server is using it.
            let held = try DataFolder(url: data, logger: .init(label: "hearth.restore"))
            let aside = data.deletingLastPathComponent().appendingPathComponent("\(data.lastPathComponent).before-restore-\(clock())")
            try FileManager.default.moveItem(at: data, to: aside)
            withExtendedLifetime(held) {}
            previous = aside
        } else if FileManager.default.fileExists(atPath: data.path) {
            try FileManager.default.removeItem(at: data)
        }
        try FileManager.default.moveItem(at: assembling, to: data)
        return Outcome(manifest: manifest, previous: previous)
    }

    /// A manifest path stays inside the backup: relative, without `..`.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == ".." || $0 == "." || $0.isEmpty }
    }
}
