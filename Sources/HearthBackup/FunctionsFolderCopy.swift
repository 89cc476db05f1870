import Foundation

/// The source of a functions folder (`hearth serve --functions`) as a backup copies it, into
/// `functions/` of the backup.
///
/// Left out, wherever they are in the folder, because they are rebuilt from the source, are
/// large, and hold paths and binaries of one machine: the folders `venv/`, `.venv/`,
/// `__pycache__/` and `node_modules/`, and `*.pyc` files. Links are not followed out of the
/// folder: a link to a file inside it is copied as that file; a link to a folder, to a place
/// outside the folder or to nothing is left out and named in the manifest. Everything else
/// (the source, `requirements.txt`, `webhooks.json`, data files, `.env`) is copied as it is.
///
/// The copy is bounded (``Limits``): a folder holding more is refused before anything is
/// copied, rather than filling the backup's disk with what is likely not source.
struct FunctionsFolderCopy: Sendable {
    /// The folder inside a backup that holds the functions' files.
    static let backupFolder = "functions"
    /// Folders left out wherever they are: environments and caches rebuilt from the source.
    static let rebuiltFolders: Set<String> = ["venv", ".venv", "__pycache__", "node_modules"]
    /// Files left out by their ending: Python's compiled bytecode.
    static let rebuiltFileEndings = [".pyc"]

    /// How much a functions folder may hold, after what is left out.
    struct Limits: Sendable {
        var maxFiles = 10_000
        var maxBytes: Int64 = 1 << 30
    }

    /// One file to copy.
    struct File: Sendable, Equatable {
        /// Where it is read from (for a link inside the folder, the link).
        var url: URL
        /// Its path inside the functions folder.
        var path: String
        var bytes: Int64
    }

    /// What a walk of the folder found.
    struct Inventory: Sendable, Equatable {
        var files: [File]
        /// Links left out (out of the folder, to a folder, or to nothing), by path in the folder.
        var linksLeftOut: [String]

        var totalBytes: Int64 { files.reduce(0) { $0 + $1.bytes } }
    }

    /// The functions folder, its links resolved.
    let folder: URL
    let limits: Limits

    /// The functions folder `folder`, copied within `limits`.
    /// - Throws: ``BackupError`` when `folder` is not a folder.
    init(folder: URL, limits: Limits = Limits()) throws {
        let resolved = folder.standardizedFileURL.resolvingSymlinksInPath()
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw BackupError("the functions folder \(folder.path) does not exist or is not a folder")
        }
        self.folder = resolved
        self.limits = limits
    }

    /// True when a folder or file of this name is left out of the copy.
    static func isRebuilt(_ name: String, isFolder: Bool) -> Bool {
        isFolder ? rebuiltFolders.contains(name) : rebuiltFileEndings.contains { name.hasSuffix($0) }
    }

    /// The files to copy, sorted by path; `skipping` are folders left out too (a data folder or
    /// stored files kept inside the functions folder, which the backup copies on its own).
    /// - Throws: ``BackupError`` when the folder holds more than ``limits`` allow.
    func inventory(skipping skipped: [URL] = []) throws -> Inventory {
        let skippedPaths = Set(skipped.map { $0.standardizedFileURL.resolvingSymlinksInPath().path })
        var inventory = Inventory(files: [], linksLeftOut: [])
        var pending = [""]
        while let relative = pending.popLast() {
            let directory = relative.isEmpty ? folder : folder.appendingPathComponent(relative)
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            } catch {
                throw BackupError("the functions folder's \(relative.isEmpty ? "top" : relative) cannot be read: \(error)")
            }
            for name in names {
                let path = relative.isEmpty ? name : "\(relative)/\(name)"
                let url = folder.appendingPathComponent(path)
                // The entry itself, not what a link leads to.
                let type = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
                switch type {
                case .typeDirectory?:
                    guard !Self.isRebuilt(name, isFolder: true), !skippedPaths.contains(url.path) else { continue }
                    pending.append(path)
                case .typeRegular?:
                    guard !Self.isRebuilt(name, isFolder: false) else { continue }
                    try add(File(url: url, path: path, bytes: Self.size(of: url)), to: &inventory)
                case .typeSymbolicLink?:
                    guard !Self.isRebuilt(name, isFolder: false) else { continue }
                    if let target = insideTarget(of: url) {
                        try add(File(url: url, path: path, bytes: Self.size(of: target)), to: &inventory)
                    } else if !Self.isRebuilt(name, isFolder: true) {
                        inventory.linksLeftOut.append(path)
                    }
                default:
                    continue  // sockets, pipes, devices: nothing to restore
                }
            }
        }
        inventory.files.sort { $0.path < $1.path }
        inventory.linksLeftOut.sort()
        return inventory
    }

    /// Adds `file`, refusing once the folder holds more than the limits allow.
    private func add(_ file: File, to inventory: inout Inventory) throws {
        inventory.files.append(file)
        guard inventory.files.count <= limits.maxFiles else {
            throw BackupError("the functions folder \(folder.path) holds more than \(limits.maxFiles) files to copy "
                + "(venv/, .venv/, __pycache__/, node_modules/ and *.pyc are left out already): move what is not source out of it")
        }
        guard inventory.totalBytes <= limits.maxBytes else {
            throw BackupError("the functions folder \(folder.path) holds more than \(limits.maxBytes) bytes to copy "
                + "(\(file.path) among them; venv/, .venv/, __pycache__/, node_modules/ and *.pyc are left out already): "
                + "move what is not source out of it")
        }
    }

    /// What the link at `url` leads to, when that is a file inside the folder.
    private func insideTarget(of url: URL) -> URL? {
        let target = url.resolvingSymlinksInPath()
        guard target.path.hasPrefix(folder.path + "/") else { return nil }
        let type = (try? FileManager.default.attributesOfItem(atPath: target.path))?[.type] as? FileAttributeType
        return type == .typeRegular ? target : nil
    }

    private static func size(of url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Copies `file` into `backup`'s `functions/`, returning its manifest entry; nil when it
    /// was deleted since the inventory (the copy is then as of a moment later).
    func copy(_ file: File, into backup: URL) throws -> BackupManifest.File? {
        let path = "\(Self.backupFolder)/\(file.path)"
        let target = backup.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        do {
            let copied = try BackupCopying.copy(from: file.url, to: target)
            return BackupManifest.File(path: path, bytes: copied.bytes, sha256: copied.sha256)
        } catch {
            guard !FileManager.default.fileExists(atPath: file.url.path) else { throw error }
            try? FileManager.default.removeItem(at: target)
            return nil
        }
    }
}
