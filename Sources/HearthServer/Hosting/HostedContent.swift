/// A hosted file as the cache hands it out: in memory (with its hash and compressed forms),
/// or to be streamed from disk.
enum HostedContent: Sendable {
    case loaded(HostedFile)
    case onDisk(HostedDiskFile)
}
