import Foundation
import HearthCore
import Synchronization

/// The latest requests the server answered, across transports (REST, Server-Sent Events
/// stream opens, account and file requests, realtime connections and messages), kept in
/// memory as a bounded ring for the console's request log and `GET /.hearth/requests`.
///
/// Paths are recorded as an access log shows them: query values that are credentials or codes
/// (`auth=`, `access_token=`, `token=`, …), and the client's messages in long-polling URLs
/// (`d0=`, …), are written as `***` (see ``HearthResponder/loggablePath(_:)``). Headers and
/// bodies are never recorded.
/// A log of capacity 0 is off: it records nothing (`hearth serve --request-log-size 0`).
///
/// Threading: a lock guards the ring, held only to store one entry (or to copy the ring out);
/// entries are built, and their paths cleaned, before it is taken.
public final class RequestLog: Sendable {
    /// One request.
    public struct Entry: Sendable, Encodable, Equatable {
        /// When the request arrived.
        public var time: Date
        /// The HTTP method, or for a realtime message its action (`put`, `listen`, …).
        public var method: String
        /// The path and query, secrets hidden.
        public var path: String
        /// The HTTP status; nil for a realtime message (answered later, on the socket).
        public var status: Int?
        /// How long the answer took; nil when it is not known yet (a realtime message).
        public var milliseconds: Double?
        /// `rest`, `sse`, `auth`, `files`, `realtime`, … (the metrics' transport label).
        public var transport: String
        /// The ID the server's own log lines carry for this request (`hb.request.id`).
        public var requestID: String?
        /// Who the request spoke for, once known: a user's uid, or `admin`.
        public var uid: String?
    }

    /// A filter, as `GET /.hearth/requests` takes it.
    public struct Filter: Sendable, Equatable {
        /// A status class: 2 for 2xx, 4 for 4xx, 5 for 5xx (entries without a status never match).
        public var statusClass: Int?
        /// Only paths starting with this.
        public var pathPrefix: String?
        /// Only requests that arrived at or after this time.
        public var since: Date?
        /// Only requests that arrived at or before this time.
        public var until: Date?
        /// Entries returned at most, newest first.
        public var limit: Int

        /// A filter that keeps everything, up to `limit` entries, unless narrowed.
        public init(statusClass: Int? = nil, pathPrefix: String? = nil, since: Date? = nil, until: Date? = nil, limit: Int = 200) {
            self.statusClass = statusClass
            self.pathPrefix = pathPrefix
            self.since = since
            self.until = until
            self.limit = limit
        }

        func matches(_ entry: Entry) -> Bool {
            if let statusClass {
                guard let status = entry.status, status / 100 == statusClass else { return false }
            }
            if let pathPrefix, !pathPrefix.isEmpty, !entry.path.hasPrefix(pathPrefix) { return false }
            if let since, entry.time < since { return false }
            if let until, entry.time > until { return false }
            return true
        }
    }

    /// Where the handling of one request notes who it speaks for, once its credential is read
    /// (deep in a responder); the ring records it with the request.
    public final class Note: Sendable {
        private let value = Mutex<String?>(nil)
        /// An empty note, filled in as the request is decided.
        public init() {}
        /// Who the request spoke for, once known (``RequestAuth/logName``: `admin` or a uid); nil when signed out.
        public var uid: String? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    /// The note of the request this task is handling, if any.
    @TaskLocal public static var current: Note?

    /// How many entries are kept; 0 when the log is off.
    public let capacity: Int
    private let ring: Mutex<BoundedRing<Entry>>

    /// How many entries are kept unless the server is told otherwise.
    public static let defaultCapacity = 1_000

    /// A log keeping the latest `capacity` requests; 0 records nothing.
    public init(capacity: Int = RequestLog.defaultCapacity) {
        precondition(capacity >= 0)
        self.capacity = capacity
        ring = Mutex(BoundedRing(capacity: max(1, capacity)))
    }

    /// False when the log keeps nothing, so callers can skip building entries.
    public var isEnabled: Bool { capacity > 0 }

    /// Keeps `entry`, dropping the oldest past ``capacity``.
    func record(_ entry: Entry) {
        guard isEnabled else { return }
        ring.withLock { $0.append(entry) }
    }

    /// Keeps a request whose `path` holds no secret (a realtime message's database path, or a
    /// path already cleaned by ``HearthResponder/loggablePath(_:)``).
    public func record(
        path: String, time: Date, method: String, status: Int? = nil, duration: Duration? = nil, transport: String,
        requestID: String? = nil, uid: String? = nil
    ) {
        record(Entry(
            time: time, method: method, path: path, status: status,
            milliseconds: duration.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 },
            transport: transport, requestID: requestID, uid: uid))
    }

    /// The kept entries matching `filter`, newest first, at most `filter.limit`.
    public func newestFirst(_ filter: Filter = Filter(limit: Int.max)) -> [Entry] {
        guard isEnabled else { return [] }
        let entries = ring.withLock { $0.oldestFirst }
        var result: [Entry] = []
        for entry in entries.reversed() where filter.matches(entry) {
            result.append(entry)
            if result.count >= filter.limit { break }
        }
        return result
    }
}
