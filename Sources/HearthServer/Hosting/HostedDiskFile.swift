import HearthHosting
import _NIOFileSystem

/// A hosted file served from disk as it is read (a large one, or any while the cache's read
/// budget is spent): never compressed, with a strong ETag made, as nginx makes its, from what
/// identifies this version of the file on disk (its size, modification and status-change times,
/// the last of which a file renamed into place has new), since
/// hashing its bytes would mean reading them all first.
struct HostedDiskFile: Sendable {
    let location: String
    let size: Int64
    let contentType: String
    let etag: String

    init(location: String, info: FileInfo) {
        self.location = location
        size = info.size
        contentType = HostingContentType.of(location)
        func hex(_ time: FileInfo.Timespec) -> String { String(time.seconds, radix: 16) + "." + String(time.nanoseconds, radix: 16) }
        etag = "\"\(String(info.size, radix: 16))-\(hex(info.lastDataModificationTime))-\(hex(info.lastStatusChangeTime))\""
    }
}
