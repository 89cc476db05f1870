import Foundation

extension FileStore {
    /// What ``removeLeftovers()`` removed.
    public struct Leftovers: Sendable, Equatable {
        /// Content files no object points at (a crash between moving content and recording it).
        public var blobs = 0
        /// Unfinished simple uploads, and resumable uploads past their lifetime or unknown.
        public var uploads = 0

        public init(blobs: Int = 0, uploads: Int = 0) {
            self.blobs = blobs
            self.uploads = uploads
        }
    }

    /// Deletes what a crash or an abandoned upload left behind. Call it when a single node
    /// starts, before it accepts requests (it must not run while another process writes to the
    /// store). A store whose metadata is shared uses ``removeLeftovers(keepingNewerThan:)``.
    /// - Throws: when the metadata is not this node's own SQLite file.
    @discardableResult
    public func removeLeftovers() throws -> Leftovers {
        guard let local else {
            throw FilesError(.internalError, "A store shared by other nodes removes leftovers with removeLeftovers(keepingNewerThan:).")
        }
        var removed = Leftovers()
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: tmpFolder.path)) ?? [] {
            try? files.removeItem(at: tmpFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        let liveUploads = try local.liveUploads(removingCreatedAtOrBefore: clock() - uploadLifetime)
        for name in (try? files.contentsOfDirectory(atPath: uploadFolder.path)) ?? [] where !liveUploads.contains(name) {
            try? files.removeItem(at: uploadFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        let referenced = try local.referencedBlobs()
        for name in (try? files.contentsOfDirectory(atPath: blobFolder.path)) ?? [] where !referenced.contains(name) {
            try? files.removeItem(at: blobFolder.appendingPathComponent(name))
            removed.blobs += 1
        }
        recountPendingBytes()
        return removed
    }

    /// Deletes what crashes and abandoned uploads left behind in a folder other nodes are
    /// writing to at the same time: only files last changed more than `age` milliseconds ago
    /// (a day is ample), so another node's upload in progress, or content it has moved into
    /// place but not yet recorded, is never taken. Safe to run on any node at any time.
    @discardableResult
    public func removeLeftovers(keepingNewerThan age: Int64) async throws -> Leftovers {
        let now = clock()
        var removed = Leftovers()
        let files = FileManager.default
        for name in oldFiles(in: tmpFolder, before: now - age) {
            try? files.removeItem(at: tmpFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        try await metadata.removeUploads(createdAtOrBefore: now - uploadLifetime)
        let uploads = oldFiles(in: uploadFolder, before: now - age)
        let live = try await metadata.activeUploads(among: uploads)
        for name in uploads where !live.contains(name) {
            try? files.removeItem(at: uploadFolder.appendingPathComponent(name))
            removed.uploads += 1
        }
        let blobs = oldFiles(in: blobFolder, before: now - age)
        let referenced = try await metadata.referencedBlobs(among: blobs)
        for name in blobs where !referenced.contains(name) {
            try? files.removeItem(at: blobFolder.appendingPathComponent(name))
            removed.blobs += 1
        }
        recountPendingBytes()
        return removed
    }

    /// The names of the files in `folder` last modified before `time` (milliseconds since the epoch).
    private func oldFiles(in folder: URL, before time: Int64) -> [String] {
        let files = FileManager.default
        return ((try? files.contentsOfDirectory(atPath: folder.path)) ?? []).filter { name in
            guard let modified = (try? files.attributesOfItem(atPath: folder.appendingPathComponent(name).path))?[.modificationDate]
                as? Date
            else { return false }
            return Int64(modified.timeIntervalSince1970 * 1000) < time
        }
    }
}
