import HearthCore
import Synchronization

/// The JSON answers of recent REST queries, each kept with the children it was computed from.
/// A repeated query (the same database, location and query parameters) is answered from here
/// without walking an index or writing JSON again, for as long as no write has touched the
/// children at that location: trees are persistent, so an untouched location still holds the
/// very same children, and any write under it replaces them.
///
/// Bounded in entries and in the size of each answer; when full, an entry makes way.
public final class QueryResultCache: Sendable {
    /// What determines a query's answer, besides the data.
    public struct Key: Hashable, Sendable {
        /// Which database the query ran on, by name.
        public var database: String
        /// Where the query ran.
        public var path: Path
        /// The query, format and shallow parameters, as sent.
        public var parameters: [String]

        /// `parameters` in a fixed order, so equal queries give equal keys.
        public init(database: String, path: Path, parameters: [String]) {
            self.database = database
            self.path = path
            self.parameters = parameters
        }
    }

    private struct Entry: Sendable {
        let source: Children
        let bytes: [UInt8]
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity: Int
    private let maximumAnswerBytes: Int

    /// - Parameters:
    ///   - capacity: how many answers are kept at most.
    ///   - maximumAnswerBytes: larger answers are not kept.
    public init(capacity: Int = 64, maximumAnswerBytes: Int = 64 * 1024) {
        self.capacity = capacity
        self.maximumAnswerBytes = maximumAnswerBytes
    }

    /// The kept answer for `key`, if it was computed from these very `children`.
    func answer(for key: Key, from children: Children) -> [UInt8]? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.source.isIdentical(to: children) else { return nil }
            return entry.bytes
        }
    }

    /// Keeps `bytes` as the answer for `key`, computed from `children`.
    func keep(_ bytes: [UInt8], for key: Key, from children: Children) {
        guard bytes.count <= maximumAnswerBytes else { return }
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity {
                entries.remove(at: entries.startIndex)
            }
            entries[key] = Entry(source: children, bytes: bytes)
        }
    }

    /// How many answers are kept.
    var count: Int { entries.withLock { $0.count } }
}
