/// A node's priority: a number or a string. Nodes without one sort first in priority order.
public enum Priority: Sendable, Hashable {
    case number(Double)
    case string(String)
}

/// The children of an object node, kept in Firebase key order.
public typealias Children = SortedTree<ChildKey, Node>

/// One immutable value in the database tree: null (absent), a leaf, or an object with at least
/// one child, optionally with a priority.
///
/// Numbers keep the distinction between integers and other numbers so that integers are written
/// back as integers; they compare and hash as IEEE-754 doubles, as Firebase does.
public enum Node: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    /// An object; its children are never empty and never null.
    case object(Children)
    /// A leaf or object with a priority. The inner node is never `.null` or `.prioritized`.
    indirect case prioritized(Node, Priority)
}

extension Node {
    /// True for the absent node.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The node without its priority.
    public var unprioritized: Node {
        if case .prioritized(let inner, _) = self { return inner }
        return self
    }

    /// The node's priority, if it has one.
    public var priority: Priority? {
        if case .prioritized(_, let priority) = self { return priority }
        return nil
    }

    /// A copy with the given priority (or none); null nodes never carry one.
    public func withPriority(_ priority: Priority?) -> Node {
        let inner = unprioritized
        guard let priority, !inner.isNull else { return inner }
        return .prioritized(inner, priority)
    }

    /// The children when this is an object.
    public var children: Children? {
        if case .object(let children) = unprioritized { return children }
        return nil
    }

    /// True for a string, number or boolean.
    public var isLeaf: Bool {
        switch unprioritized {
        case .bool, .int, .double, .string: return true
        default: return false
        }
    }

    /// The number of direct children (zero for leaves).
    public var childCount: Int { children?.count ?? 0 }

    /// The child named `key`, or null.
    public func child(_ key: ChildKey) -> Node {
        children?[key] ?? .null
    }

    /// The node at a relative path, or null.
    public func child(at path: Path) -> Node {
        var node = self
        for key in path.keys {
            node = node.child(key)
            if node.isNull { return .null }
        }
        return node
    }

    /// The numeric value of a number leaf.
    public var numberValue: Double? {
        switch unprioritized {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The value of a number leaf that is a whole number within `Int64` (nil for `1e300`, `1.5`).
    public var integerValue: Int64? {
        switch unprioritized {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// Builds an object node from children, dropping null values; null when nothing remains.
    public static func object(_ entries: [(ChildKey, Node)]) -> Node {
        let kept = entries.filter { !$0.1.isNull }
        guard !kept.isEmpty else { return .null }
        return .object(Children(entries: kept))
    }

    /// Wraps a non-empty children tree, or null for an empty one.
    static func fromChildren(_ children: Children) -> Node {
        children.isEmpty ? .null : .object(children)
    }
}

extension Node: Equatable {
    /// Equal values and equal priorities; `1` equals `1.0`, as both are the number one.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case (.int, .double), (.double, .int), (.double, .double):
            return lhs.numberValue == rhs.numberValue
        case let (.object(a), .object(b)):
            guard a.count == b.count else { return false }
            if a.isIdentical(to: b) { return true }
            for (left, right) in zip(a, b) where left.key != right.key || left.value != right.value {
                return false
            }
            return true
        case let (.prioritized(a, p), .prioritized(b, q)): return p == q && a == b
        default: return false
        }
    }
}
