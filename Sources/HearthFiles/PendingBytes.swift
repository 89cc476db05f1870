import Synchronization

/// The bytes unfinished uploads hold on disk (resumable uploads' files in `uploads/`, simple
/// and multipart uploads streaming into `tmp/`), against ``UploadLimits/maxPendingBytes``.
///
/// Writers reserve each piece before writing it, so two uploads streaming at once cannot
/// both pass the limit. The count is this process's: in a cluster other nodes write to the
/// same folder, so ``FileStore/removeExpiredUploads()`` sets it from what the folder holds.
final class PendingBytes: Sendable {
    let limit: Int64
    private let used: Mutex<Int64>

    init(limit: Int64, used: Int64) {
        self.limit = limit
        self.used = Mutex(used)
    }

    /// The bytes counted now.
    var count: Int64 { used.withLock { $0 } }

    /// Counts `bytes` more.
    /// - Throws: ``FilesError/uploadsFull`` when that would pass the limit (nothing is counted).
    func reserve(_ bytes: Int64) throws(FilesError) {
        let reserved = used.withLock { used in
            guard used + bytes <= limit else { return false }
            used += bytes
            return true
        }
        guard reserved else { throw FilesError.uploadsFull }
    }

    /// Counts `bytes` fewer: they left `uploads/` or `tmp/`.
    func release(_ bytes: Int64) {
        used.withLock { $0 = max(0, $0 - bytes) }
    }

    /// Sets the count to what the folders hold (measured outside the lock).
    func reset(to bytes: Int64) {
        used.withLock { $0 = bytes }
    }
}
