/// A key type with a total order given as a three-way comparison.
public protocol TreeKey: Sendable {
    /// Negative when `lhs` sorts first, zero when equal, positive when `rhs` sorts first.
    static func compare(_ lhs: Self, _ rhs: Self) -> Int
}

extension ChildKey: TreeKey {}

/// An immutable, structurally shared sorted map: a weight-balanced binary tree (Adams' trees,
/// as in Haskell's `Data.Map`). Inserting or removing one entry copies only the O(log n) nodes
/// on the path to it; every other node is shared with the previous version, so a write under a
/// node with a million children allocates a few dozen small nodes and never copies the rest.
public struct SortedTree<Key: TreeKey, Value: Sendable>: Sendable {
    @usableFromInline
    final class Branch: Sendable {
        let key: Key
        let value: Value
        let left: Branch?
        let right: Branch?
        let size: Int

        init(_ key: Key, _ value: Value, _ left: Branch?, _ right: Branch?) {
            self.key = key
            self.value = value
            self.left = left
            self.right = right
            self.size = (left?.size ?? 0) + (right?.size ?? 0) + 1
        }

        @usableFromInline
        func forEachInOrder(_ body: (Key, Value) throws -> Void) rethrows {
            try left?.forEachInOrder(body)
            try body(key, value)
            try right?.forEachInOrder(body)
        }
    }

    @usableFromInline
    var root: Branch?

    /// An empty tree.
    public init() { root = nil }

    init(root: Branch?) { self.root = root }

    /// Builds a tree in O(n) from entries already sorted by key with no duplicates.
    public init<C: Collection>(sortedUniqueEntries entries: C) where C.Element == (Key, Value), C.Index == Int {
        func build(_ low: Int, _ high: Int) -> Branch? {
            guard low < high else { return nil }
            let mid = (low + high) / 2
            let entry = entries[mid]
            return Branch(entry.0, entry.1, build(low, mid), build(mid + 1, high))
        }
        root = build(entries.startIndex, entries.endIndex)
    }

    /// Builds a tree from entries in any order; a later duplicate key replaces an earlier one.
    public init(entries: consuming [(Key, Value)]) {
        if entries.count <= 16 {
            // Small objects (most request bodies): a stable insertion sort in place, then equal
            // keys folded to the last, as below, without enumerating and sorting copies.
            var items = entries
            // Through the buffer: comparing elements in place copies (and retains) nothing.
            let kept = items.withUnsafeMutableBufferPointer { items -> Int in
                var index = 1
                while index < items.count {
                    var position = index
                    while position > 0 && Key.compare(items[position - 1].0, items[position].0) > 0 {
                        items.swapAt(position - 1, position)
                        position -= 1
                    }
                    index += 1
                }
                var kept = 0
                for index in items.indices {
                    if kept > 0 && Key.compare(items[kept - 1].0, items[index].0) == 0 {
                        items.swapAt(kept - 1, index)
                    } else {
                        if kept != index { items.swapAt(kept, index) }
                        kept += 1
                    }
                }
                return kept
            }
            items.removeLast(items.count - kept)
            self.init(sortedUniqueEntries: items)
            return
        }
        // Ties go to input position, so the later of two equal keys comes last and wins below.
        let sorted = entries.enumerated().sorted {
            let order = Key.compare($0.element.0, $1.element.0)
            return order != 0 ? order < 0 : $0.offset < $1.offset
        }.map(\.element)
        var unique: [(Key, Value)] = []
        unique.reserveCapacity(sorted.count)
        for entry in sorted {
            if let last = unique.last, Key.compare(last.0, entry.0) == 0 {
                unique[unique.count - 1] = entry
            } else {
                unique.append(entry)
            }
        }
        self.init(sortedUniqueEntries: unique)
    }

    /// Calls `body` with every entry in key order, without an iterator's stack.
    @inlinable
    public func forEachInOrder(_ body: (Key, Value) throws -> Void) rethrows {
        try root?.forEachInOrder(body)
    }

    /// The number of entries.
    public var count: Int { root?.size ?? 0 }

    /// True when there are no entries.
    public var isEmpty: Bool { root == nil }

    /// The value stored under `key`, if any.
    public subscript(key: Key) -> Value? {
        var node = root
        while let current = node {
            let order = Key.compare(key, current.key)
            if order == 0 { return current.value }
            node = order < 0 ? current.left : current.right
        }
        return nil
    }

    /// The first entry in key order.
    public var first: (key: Key, value: Value)? {
        guard var node = root else { return nil }
        while let left = node.left { node = left }
        return (node.key, node.value)
    }

    /// The last entry in key order.
    public var last: (key: Key, value: Value)? {
        guard var node = root else { return nil }
        while let right = node.right { node = right }
        return (node.key, node.value)
    }

    /// A copy with `value` stored under `key`.
    public func inserting(_ key: Key, _ value: Value) -> SortedTree {
        SortedTree(root: Self.insert(key, value, into: root))
    }

    /// A copy without `key`.
    public func removing(_ key: Key) -> SortedTree {
        SortedTree(root: Self.remove(key, from: root))
    }

    /// Stores `value` under `key`.
    public mutating func insert(_ key: Key, _ value: Value) {
        root = Self.insert(key, value, into: root)
    }

    /// Removes `key` if present.
    public mutating func remove(_ key: Key) {
        root = Self.remove(key, from: root)
    }

    /// The number of entries whose key sorts before the position described by `isBefore`.
    /// `isBefore(key)` must be true for a prefix of the keys in order and false after it.
    public func rank(where isBefore: (Key) -> Bool) -> Int {
        var node = root
        var rank = 0
        while let current = node {
            if isBefore(current.key) {
                rank += (current.left?.size ?? 0) + 1
                node = current.right
            } else {
                node = current.left
            }
        }
        return rank
    }

    /// The entry at position `index` in key order.
    public func entry(at index: Int) -> (key: Key, value: Value)? {
        var node = root
        var index = index
        while let current = node {
            let leftSize = current.left?.size ?? 0
            if index < leftSize {
                node = current.left
            } else if index == leftSize {
                return (current.key, current.value)
            } else {
                index -= leftSize + 1
                node = current.right
            }
        }
        return nil
    }

    /// True when both trees share the same root storage (no change between two versions).
    public func isIdentical(to other: SortedTree) -> Bool { root === other.root }
}

// MARK: - Balancing

extension SortedTree {
    private static var delta: Int { 3 }
    private static var ratio: Int { 2 }

    private static func size(_ node: Branch?) -> Int { node?.size ?? 0 }

    private static func insert(_ key: Key, _ value: Value, into node: Branch?) -> Branch {
        guard let node else { return Branch(key, value, nil, nil) }
        let order = Key.compare(key, node.key)
        if order < 0 {
            return balance(node.key, node.value, insert(key, value, into: node.left), node.right)
        } else if order > 0 {
            return balance(node.key, node.value, node.left, insert(key, value, into: node.right))
        }
        return Branch(key, value, node.left, node.right)
    }

    private static func remove(_ key: Key, from node: Branch?) -> Branch? {
        guard let node else { return nil }
        let order = Key.compare(key, node.key)
        if order < 0 {
            let left = remove(key, from: node.left)
            if left === node.left { return node }
            return balance(node.key, node.value, left, node.right)
        } else if order > 0 {
            let right = remove(key, from: node.right)
            if right === node.right { return node }
            return balance(node.key, node.value, node.left, right)
        }
        return glue(node.left, node.right)
    }

    private static func glue(_ left: Branch?, _ right: Branch?) -> Branch? {
        guard let left else { return right }
        guard let right else { return left }
        if left.size > right.size {
            let (key, value, rest) = removeMax(left)
            return balance(key, value, rest, right)
        }
        let (key, value, rest) = removeMin(right)
        return balance(key, value, left, rest)
    }

    private static func removeMin(_ node: Branch) -> (Key, Value, Branch?) {
        guard let left = node.left else { return (node.key, node.value, node.right) }
        let (key, value, rest) = removeMin(left)
        return (key, value, balance(node.key, node.value, rest, node.right))
    }

    private static func removeMax(_ node: Branch) -> (Key, Value, Branch?) {
        guard let right = node.right else { return (node.key, node.value, node.left) }
        let (key, value, rest) = removeMax(right)
        return (key, value, balance(node.key, node.value, node.left, rest))
    }

    private static func balance(_ key: Key, _ value: Value, _ left: Branch?, _ right: Branch?) -> Branch {
        let sizeLeft = size(left)
        let sizeRight = size(right)
        if sizeLeft + sizeRight <= 1 { return Branch(key, value, left, right) }
        if sizeRight > delta * sizeLeft, let right {
            if size(right.left) < ratio * size(right.right) {
                return Branch(right.key, right.value, Branch(key, value, left, right.left), right.right)
            }
            let middle = right.left!
            return Branch(
                middle.key, middle.value,
                Branch(key, value, left, middle.left),
                Branch(right.key, right.value, middle.right, right.right)
            )
        }
        if sizeLeft > delta * sizeRight, let left {
            if size(left.right) < ratio * size(left.left) {
                return Branch(left.key, left.value, left.left, Branch(key, value, left.right, right))
            }
            let middle = left.right!
            return Branch(
                middle.key, middle.value,
                Branch(left.key, left.value, left.left, middle.left),
                Branch(key, value, middle.right, right)
            )
        }
        return Branch(key, value, left, right)
    }
}

// MARK: - Traversal

extension SortedTree: Sequence {
    /// Walks the entries in key order.
    public struct Iterator: IteratorProtocol {
        var stack: [Branch] = []
        let forward: Bool

        init(root: Branch?, forward: Bool) {
            self.forward = forward
            descend(from: root)
        }

        /// Starts at the first entry for which `isBefore` is false (forward), or the last entry
        /// for which `isBefore` is true (backward).
        init(root: Branch?, forward: Bool, isBefore: (Key) -> Bool) {
            self.forward = forward
            var node = root
            while let current = node {
                if forward {
                    if isBefore(current.key) {
                        node = current.right
                    } else {
                        stack.append(current)
                        node = current.left
                    }
                } else {
                    if isBefore(current.key) {
                        stack.append(current)
                        node = current.right
                    } else {
                        node = current.left
                    }
                }
            }
        }

        private mutating func descend(from node: Branch?) {
            var node = node
            while let current = node {
                stack.append(current)
                node = forward ? current.left : current.right
            }
        }

        public mutating func next() -> (key: Key, value: Value)? {
            guard let top = stack.popLast() else { return nil }
            descend(from: forward ? top.right : top.left)
            return (top.key, top.value)
        }
    }

    public func makeIterator() -> Iterator { Iterator(root: root, forward: true) }

    public var underestimatedCount: Int { count }

    /// Entries in descending key order.
    public func reversed() -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, forward: false))
    }

    /// Entries in key order starting at the first key for which `isBefore` is false.
    public func entries(from isBefore: (Key) -> Bool) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, forward: true, isBefore: isBefore))
    }

    /// Entries in descending key order starting at the last key for which `isBefore` is true.
    public func entriesDescending(before isBefore: (Key) -> Bool) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, forward: false, isBefore: isBefore))
    }
}
