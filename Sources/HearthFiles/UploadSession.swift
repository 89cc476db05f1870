/// A resumable upload: started with the object's name and metadata, fed in chunks (each
/// starting where the last ended), then finished or cancelled. Its bytes so far are kept in
/// `uploads/<id>` and its record in the store's metadata, so it survives a dropped connection
/// and a restart (and, in a cluster, is continued by any node).
public struct UploadSession: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active, final, cancelled
    }

    public var id: String
    public var bucket: String
    public var name: String
    public var fields: ObjectFields
    /// The total size the client announced, if it did.
    public var declaredSize: Int64?
    /// Bytes received so far.
    public var received: Int64
    public var status: Status
    /// Milliseconds since the epoch.
    public var createdAt: Int64
    /// Who started it, and so who may continue it; nil for an upload recorded before owners
    /// were (only an admin may continue it).
    public var owner: UploadOwner?
    /// When it last received a chunk, or started (milliseconds since the epoch): an upload
    /// idle for longer than ``UploadLimits/idleLifetime`` is removed.
    public var lastActiveAt: Int64

    public init(
        id: String, bucket: String, name: String, fields: ObjectFields, declaredSize: Int64?, received: Int64, status: Status,
        createdAt: Int64, owner: UploadOwner? = nil, lastActiveAt: Int64? = nil
    ) {
        self.id = id
        self.bucket = bucket
        self.name = name
        self.fields = fields
        self.declaredSize = declaredSize
        self.received = received
        self.status = status
        self.createdAt = createdAt
        self.owner = owner
        self.lastActiveAt = lastActiveAt ?? createdAt
    }
}
