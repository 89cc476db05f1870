import Foundation

#if canImport(CoreFoundation)
import CoreFoundation  // `stat`'s fields, as Foundation on Linux declares them
#endif

/// What one `stat(2)` says of a file, for the hosted app's per-request checks: a direct system
/// call (about a microsecond on a local disk) where an asynchronous file system call would
/// hop to a thread pool and back, which costs more than serving a small cached file.
struct FileStatus: Equatable, Sendable {
    var isRegularFile: Bool
    var size: Int64
    var inode: UInt64
    var device: UInt64
    /// Modification and status-change times, in nanoseconds.
    var modified: Int64
    var changed: Int64

    /// The status of the file at `path`, following symbolic links; nil when there is none or
    /// it cannot be read.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        isRegularFile = (status.st_mode & S_IFMT) == S_IFREG
        size = Int64(status.st_size)
        inode = UInt64(status.st_ino)
        device = UInt64(status.st_dev)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    }
}
