import Foundation

/// Where a device remembers the home feed's last catch-up, per user: whom they followed then,
/// and the newest post's time it saw (the server's clock). With it, ``FeedViewModel`` asks only for the posts written
/// since instead of reading every followed person's posts again (the web app keeps the same
/// marker in localStorage). An app shares one for its lifetime; a new one starts with no
/// markers (the first catch-up is then a full one).
@MainActor
public final class FeedCatchUpMarkers {
    /// One user's last catch-up.
    public struct Marker: Equatable, Sendable, Codable {
        /// The people followed then, sorted.
        public var following: [String]
        /// The newest post's time (ms since 1970, the server's) when that catch-up ran.
        public var since: Int64

        public init(following: [String], since: Int64) {
            self.following = following
            self.since = since
        }
    }

    private var markers: [String: Marker]

    public init(_ markers: [String: Marker] = [:]) {
        self.markers = markers
    }

    /// The last catch-up of `uid`'s feed, if any.
    public func marker(for uid: String) -> Marker? { markers[uid] }

    /// Remembers a catch-up of `uid`'s feed.
    public func keep(_ marker: Marker, for uid: String) { markers[uid] = marker }
}
