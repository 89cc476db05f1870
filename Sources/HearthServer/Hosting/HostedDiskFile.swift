import HearthHosting

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

    init(location: String, status: FileStatus) {
        self.location = location
        size = status.size
        contentType = HostingContentType.of(location)
        etag = "\"\(String(status.size, radix: 16))-\(String(status.modified, radix: 16))-\(String(status.changed, radix: 16))\""
    }
}
