/// A query on the children of one location: an ordering, optional range bounds and a limit.
public struct Query: Sendable, Equatable {
    /// What children are ordered by.
    public enum Order: Sendable, Hashable, CustomStringConvertible {
        /// By key (`$key`).
        case key
        /// By the child's own value (`$value`).
        case value
        /// By priority (`$priority`).
        case priority
        /// By the value at a path inside each child (`orderBy="a/b"`).
        case child(Path)

        /// A fixed position among the kinds of ordering, for sorting them.
        var rank: Int {
            switch self {
            case .key: return 0
            case .value: return 1
            case .priority: return 2
            case .child: return 3
            }
        }

        public var description: String {
            switch self {
            case .key: return "$key"
            case .value: return "$value"
            case .priority: return "$priority"
            case .child(let path): return path.keys.map(\.string).joined(separator: "/")
            }
        }
    }

    /// One end of a range: a primitive value, optionally a key to break ties, and whether the
    /// end itself is included (`startAt`/`endAt`) or not (`startAfter`/`endBefore`).
    public struct Bound: Sendable, Equatable {
        public var value: Node
        public var key: ChildKey?
        public var inclusive: Bool

        public init(value: Node, key: ChildKey? = nil, inclusive: Bool = true) {
            self.value = value
            self.key = key
            self.inclusive = inclusive
        }
    }

    /// How many children to keep, from the front or from the back.
    public enum Limit: Sendable, Hashable {
        case first(Int)
        case last(Int)
    }

    public var order: Order
    public var start: Bound?
    public var end: Bound?
    public var limit: Limit?

    public init(order: Order, start: Bound? = nil, end: Bound? = nil, limit: Limit? = nil) {
        self.order = order
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// `equalTo(value[, key])`: both bounds inclusive at the same place.
    public static func equal(order: Order, value: Node, key: ChildKey? = nil, limit: Limit? = nil) -> Query {
        let bound = Bound(value: value, key: key, inclusive: true)
        return Query(order: order, start: bound, end: bound, limit: limit)
    }

    /// True when the ordering benefits from an index (child and value orderings).
    public var usesIndex: Bool {
        switch order {
        case .key, .priority: return false
        case .value, .child: return true
        }
    }

    /// The value a child is ordered by under this query's ordering.
    public func sortValue(of child: Node) -> SortValue {
        Self.sortValue(of: child, order: order)
    }

    static func sortValue(of child: Node, order: Order) -> SortValue {
        switch order {
        case .key: return .null
        case .value: return SortValue(child)
        case .priority: return SortValue(priority: child.priority)
        case .child(let path): return SortValue(child.child(at: path))
        }
    }
}
