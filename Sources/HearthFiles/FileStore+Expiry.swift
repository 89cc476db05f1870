import Foundation
import Synchronization

extension FileStore {
    /// What ``removeExpiredUploads()`` did.
    public struct ExpiredUploads: Sendable, Equatable {
        /// Resumable uploads removed: past ``UploadLimits/lifetime``, or idle past
        /// ``UploadLimits/idleLifetime``.
        public var uploads = 0
        /// The bytes their files held.
        public var bytes: Int64 = 0
        /// The bytes unfinished uploads hold after the sweep.
        public var pendingBytes: Int64 = 0

        public init(uploads: Int = 0, bytes: Int64 = 0, pendingBytes: Int64 = 0) {
            self.uploads = uploads
            self.bytes = bytes
            self.pendingBytes = pendingBytes
        }
    }

    /// Removes the resumable uploads started longer than ``UploadLimits/lifetime`` ago or
    /// idle for longer than ``UploadLimits/idleLifetime`` (their records and bytes), and
    /// counts again the bytes unfinished uploads hold. Safe to run at any time, on any node:
    /// an upload this process is writing to is spared, and one another node writes to has
    /// just been active.
    @discardableResult
    public func removeExpiredUploads() async throws -> ExpiredUploads {
        let now = clock()
        let busy = busyUploads.withLock { $0 }
        let removed = try await metadata.removeUploads(
            createdAtOrBefore: now - uploadLimits.lifetime, lastActiveAtOrBefore: now - uploadLimits.idleLifetime, sparing: busy)
        var expired = ExpiredUploads()
        for id in removed where Self.isUploadID(id) {
            expired.uploads += 1
            expired.bytes += removeUploadFile(id)
        }
        recountPendingBytes()
        expired.pendingBytes = pending.count
        return expired
    }

    /// The bytes unfinished uploads hold now, as counted against ``UploadLimits/maxPendingBytes``.
    public var pendingBytes: Int64 { pending.count }

    /// Sets the pending bytes to what `uploads/` and `tmp/` hold: in a cluster, other nodes'
    /// uploads are there too.
    func recountPendingBytes() {
        pending.reset(to: Self.bytes(in: uploadFolder) + Self.bytes(in: tmpFolder))
    }
}
