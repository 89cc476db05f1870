/// A Cloud Storage trigger: which object changes, in which bucket.
public struct StorageTrigger: Sendable, Hashable {
    /// Which changes fire it, as Firebase's event types name them.
    public enum Change: String, Sendable, CaseIterable {
        case finalized
        case deleted
        case metadataUpdated

        /// The CloudEvent type.
        public var eventType: String { "google.cloud.storage.object.v1.\(rawValue)" }

        public init?(eventType: String) {
            let prefix = "google.cloud.storage.object.v1."
            guard eventType.hasPrefix(prefix) else { return nil }
            self.init(rawValue: String(eventType.dropFirst(prefix.count)))
        }
    }

    public var change: Change
    /// The bucket it watches (`<project>.appspot.com` unless another is named).
    public var bucket: String

    public init(change: Change, bucket: String) {
        self.change = change
        self.bucket = bucket
    }
}
