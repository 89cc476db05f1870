import HearthCore
import HearthStore

/// Browsing a database in parts, for the admin console's Data section: how big a location is
/// before it is streamed, and its children a page at a time with only their size. These are
/// admin reads: the transport lets only admins ask, and the rules are not consulted.
extension DatabaseOperations {
    /// How big the value at a location is.
    public struct DataSummary: Sendable, Equatable {
        /// Its direct children (0 for a leaf or no value).
        public var children: Int
        /// Nodes in its subtree, itself included, up to the cap asked for.
        public var nodes: Int
        /// True when the subtree has more nodes than the cap.
        public var more: Bool
    }

    /// One child in a ``ChildPage``: a leaf with its value, or an object with its child count.
    public enum ChildEntry: Sendable, Equatable {
        case leaf(ChildKey, Node)
        case object(ChildKey, children: Int)

        /// The child's key, whichever kind it is.
        public var key: ChildKey {
            switch self {
            case .leaf(let key, _), .object(let key, _): key
            }
        }
    }

    /// Children of a location in key order, as a shallow read shows them.
    public struct ChildPage: Sendable {
        /// All the location's children.
        public var children: Int
        /// The children on this page, in key order.
        public var entries: [ChildEntry]
        /// True when more children in the range follow the page.
        public var more: Bool
    }

    /// The largest ``childPage(_:at:startAt:startAfter:endAt:limit:)`` page and ``summary(_:at:cap:)`` cap.
    static let maxPage = 1_000
    static let maxCap = 1_000_000

    /// How big the value at `path` is, its nodes counted up to `cap` (bounded work).
    public func summary(_ database: Database, at path: Path, cap: Int) throws(HearthError) -> DataSummary {
        guard (1...Self.maxCap).contains(cap) else {
            throw HearthError(.invalidQuery, "cap must be a whole number from 1 to \(Self.maxCap)")
        }
        let value = database.current.state.value(at: path)
        let (nodes, more) = value.nodeCount(upTo: cap)
        return DataSummary(children: value.childCount, nodes: nodes, more: more)
    }

    /// Up to `limit` children of `path` in key order, from `startAt` (inclusive) or `startAfter`
    /// (exclusive) up to `endAt` (inclusive): leaves with their values, objects with their
    /// child counts. O(log n + limit), however many children the location has.
    public func childPage(
        _ database: Database, at path: Path, startAt: ChildKey?, startAfter: ChildKey?, endAt: ChildKey?, limit: Int
    ) throws(HearthError) -> ChildPage {
        guard (1...Self.maxPage).contains(limit) else {
            throw HearthError(.invalidQuery, "limit must be a whole number from 1 to \(Self.maxPage)")
        }
        guard startAt == nil || startAfter == nil else {
            throw HearthError(.invalidQuery, "startAt and startAfter cannot both be defined")
        }
        guard let children = database.current.state.value(at: path).children else {
            return ChildPage(children: 0, entries: [], more: false)
        }
        let isBefore: (ChildKey) -> Bool
        if let startAt {
            isBefore = { ChildKey.compare($0, startAt) < 0 }
        } else if let startAfter {
            isBefore = { ChildKey.compare($0, startAfter) <= 0 }
        } else {
            isBefore = { _ in false }
        }
        var entries: [ChildEntry] = []
        var more = false
        for (key, child) in children.entries(from: isBefore) {
            if let endAt, ChildKey.compare(key, endAt) > 0 { break }
            if entries.count == limit {
                more = true
                break
            }
            if let grandchildren = child.children {
                entries.append(.object(key, children: grandchildren.count))
            } else {
                entries.append(.leaf(key, child.unprioritized))
            }
        }
        return ChildPage(children: children.count, entries: entries, more: more)
    }
}
