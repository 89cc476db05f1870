import Foundation
import Synchronization

/// The accounts deleted lately, kept in a small file so their clean-up can run again after the
/// ID tokens they had expire: until then, a device still signed in may write again as them
/// (Firebase's databases accept an ID token until it expires, whatever happened to the account
/// since), and a second run takes that away too. At most ``limit`` are kept (the oldest go).
///
/// Threading: every method may be called from any task; the lock is held across a read and its
/// write, so concurrent changes are never lost.
public final class DeletedAccountsLedger: Sendable {
    /// One deleted account.
    public struct Entry: Codable, Equatable, Sendable {
        public var uid: String
        /// When it was deleted (milliseconds since the epoch).
        public var deletedAt: Int64
    }

    public let url: URL
    public let limit: Int
    private let lock = Mutex(())

    public init(url: URL, limit: Int = 10_000) {
        self.url = url
        self.limit = limit
    }

    /// Notes that `uid` was deleted at `time` (again: the later time is kept).
    public func record(_ uid: String, at time: Int64) throws {
        try lock.withLock { _ in
            var entries = try read().filter { $0.uid != uid }
            entries.append(Entry(uid: uid, deletedAt: time))
            try write(Array(entries.suffix(limit)))
        }
    }

    /// Every entry, oldest first.
    public func entries() throws -> [Entry] {
        try lock.withLock { _ in try read() }
    }

    /// Forgets the entries deleted at or before `time`.
    public func forget(deletedAtOrBefore time: Int64, uids: Set<String>) throws {
        try lock.withLock { _ in
            try write(try read().filter { !(uids.contains($0.uid) && $0.deletedAt <= time) })
        }
    }

    private func read() throws -> [Entry] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try JSONDecoder().decode([Entry].self, from: Data(contentsOf: url))
    }

    private func write(_ entries: [Entry]) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(entries).write(to: url, options: .atomic)
    }
}
