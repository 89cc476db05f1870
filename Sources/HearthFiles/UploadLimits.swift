/// What unfinished uploads may hold, so that clients the rules let write cannot fill the disk
/// with uploads they never finish, and how long an unfinished resumable upload is kept.
public struct UploadLimits: Sendable, Equatable {
    /// How long a resumable upload is kept after it started, finished or not (ms). Cloud
    /// Storage's upload URLs last a week.
    public var lifetime: Int64 = 7 * 24 * 3600 * 1000
    /// How long a resumable upload is kept after its last chunk (or its start) when no chunk
    /// follows (ms). The Firebase SDKs give up on an upload after minutes of failed retries.
    public var idleLifetime: Int64 = 24 * 3600 * 1000
    /// The most resumable uploads one user (or, signed out, one client address) may have
    /// open at once; the admin credential is not counted.
    public var maxOpenPerOwner = 100
    /// The most resumable uploads open at once on the server.
    public var maxOpen = 10_000
    /// The most bytes unfinished uploads (resumable ones, and simple or multipart ones still
    /// streaming) may hold on disk together.
    public var maxPendingBytes: Int64 = 20 << 30

    public init(
        lifetime: Int64 = 7 * 24 * 3600 * 1000, idleLifetime: Int64 = 24 * 3600 * 1000, maxOpenPerOwner: Int = 100,
        maxOpen: Int = 10_000, maxPendingBytes: Int64 = 20 << 30
    ) {
        self.lifetime = lifetime
        self.idleLifetime = idleLifetime
        self.maxOpenPerOwner = maxOpenPerOwner
        self.maxOpen = maxOpen
        self.maxPendingBytes = maxPendingBytes
    }
}
