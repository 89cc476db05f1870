/// An ordered index over the children of one location for one ordering, so that range and
/// limit queries walk only the entries they return. It is immutable and structurally shared
/// like the tree, and is kept up to date one changed child at a time.
public struct ChildIndex: Sendable {
    /// The ordering this index serves.
    public let order: Query.Order
    /// Every child's entry, in order, with the child itself, so a query reads its results
    /// straight from the index.
    public private(set) var entries: SortedTree<IndexEntry, Node>

    /// Builds the index for the children of `node`.
    public init(order: Query.Order, over node: Node) {
        self.order = order
        var list: [(IndexEntry, Node)] = []
        if let children = node.children {
            list.reserveCapacity(children.count)
            for (key, child) in children {
                list.append((IndexEntry(value: Query.sortValue(of: child, order: order), key: key), child))
            }
        }
        list.sort { IndexEntry.compare($0.0, $1.0) < 0 }
        entries = SortedTree(sortedUniqueEntries: list)
    }

    /// Moves the entry of child `key` from its old value to its new one.
    public mutating func update(key: ChildKey, old: Node, new: Node) {
        let oldValue = Query.sortValue(of: old, order: order)
        let newValue = Query.sortValue(of: new, order: order)
        if !old.isNull && (new.isNull || oldValue != newValue) { entries.remove(IndexEntry(value: oldValue, key: key)) }
        if !new.isNull { entries.insert(IndexEntry(value: newValue, key: key), new) }
    }

    /// The number of indexed children.
    public var count: Int { entries.count }
}
