import Foundation

/// `hearth-backup.json`, written last into a backup: what it holds, with a SHA-256 of every
/// file, so a restore can tell a whole backup from a damaged or unfinished one.
public struct BackupManifest: Codable, Sendable, Equatable {
    static let fileName = "hearth-backup.json"
    /// The newest format this build reads: 2 added ``functions``.
    static let currentFormat = 2

    /// The format a backup is written in: 1 without functions, so an older Hearth still restores
    /// it; 2 with them, so an older Hearth refuses it rather than restoring the functions' files
    /// into the data folder.
    static func format(holdingFunctions: Bool) -> Int {
        holdingFunctions ? 2 : 1
    }

    /// One copied file, by its path inside the backup.
    public struct File: Codable, Sendable, Equatable {
        /// Its path inside the backup.
        public var path: String
        /// Its size in bytes, checked with the hash before a restore.
        public var bytes: Int64
        /// Its SHA-256, hex, checked before a restore.
        public var sha256: String
    }

    /// A database: the last write the backup holds.
    public struct DatabaseEntry: Codable, Sendable, Equatable {
        /// Which database (its folder's name in the data folder).
        public var name: String
        /// The last write the backup holds.
        public var sequence: Int64
    }

    /// The functions folder a backup holds, in `functions/` (see ``FunctionsFolderCopy`` for
    /// what is left out).
    public struct FunctionsEntry: Codable, Sendable, Equatable {
        /// The functions folder it was copied from (`--functions`).
        public var source: String
        /// Links left out of the copy (out of the folder, to a folder, or to nothing), by their
        /// path in the folder.
        public var linksLeftOut: [String]
    }

    /// The manifest's format version, refused when newer than this build reads.
    public var format: Int
    /// When the backup started and finished (ms since the epoch).
    public var startedAt: Int64
    /// When the backup finished (ms since the epoch).
    public var finishedAt: Int64
    /// The data folder it was made from.
    public var source: String
    /// Each database the backup holds, with the last write it holds.
    public var databases: [DatabaseEntry]
    /// Stored files (objects) the backup holds content for.
    public var objects: Int
    /// Every copied file, with its size and hash (the functions' under `functions/`).
    public var files: [File]
    /// The functions folder the backup holds; nil when it holds none (and in format 1).
    public var functions: FunctionsEntry?

    /// True for a file of the functions folder (rather than of the data folder).
    public func isFunctionsFile(_ file: File) -> Bool {
        functions != nil && file.path.hasPrefix(FunctionsFolderCopy.backupFolder + "/")
    }

    /// The total size of the backup's files.
    public var totalBytes: Int64 { files.reduce(0) { $0 + $1.bytes } }

    /// Reads the manifest of the backup in `folder`.
    /// - Throws: ``BackupError`` when there is none or it cannot be read.
    static func read(from folder: URL) throws -> BackupManifest {
        let url = folder.appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw BackupError("\(folder.path) is not a finished Hearth backup (no \(fileName))")
        }
        do {
            let manifest = try JSONDecoder().decode(BackupManifest.self, from: data)
            guard manifest.format <= currentFormat else {
                throw BackupError("\(folder.path) was made by a newer Hearth (backup format \(manifest.format))")
            }
            return manifest
        } catch let error as BackupError {
            throw error
        } catch {
            throw BackupError("\(url.path) cannot be read: \(error)")
        }
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}

/// Why a backup or a restore could not be made, in words for the operator.
public struct BackupError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in words for the operator.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
