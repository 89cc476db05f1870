/// One immutable version of a database: the tree and the indexes over it.
///
/// Applying a write returns a new version that shares every untouched node with this one, so
/// readers can keep using an older version while the writer moves on.
public struct DatabaseState: Sendable {
    /// Names one index: a location and an ordering.
    public struct IndexID: Sendable, Hashable, TreeKey {
        public let path: Path
        public let order: Query.Order

        public init(path: Path, order: Query.Order) {
            self.path = path
            self.order = order
        }

        public static func compare(_ lhs: IndexID, _ rhs: IndexID) -> Int {
            let order = Path.compare(lhs.path, rhs.path)
            if order != 0 { return order }
            switch (lhs.order, rhs.order) {
            case let (.child(left), .child(right)): return Path.compare(left, right)
            default: return lhs.order.rank - rhs.order.rank
            }
        }
    }

    /// The whole tree.
    public private(set) var root: Node
    /// Every index, by location and ordering.
    public private(set) var indexes: SortedTree<IndexID, ChildIndex>

    /// A version holding `root` with no indexes.
    public init(root: Node = .null) {
        self.root = root
        self.indexes = SortedTree()
    }

    // MARK: - Reading

    /// The value at `path` (a `.priority` path reads the priority).
    public func value(at path: Path) -> Node {
        if path.isPriorityPath, let parent = path.parent {
            switch root.child(at: parent).priority {
            case .number(let value)?: return .double(value)
            case .string(let value)?: return .string(value)
            case nil: return .null
            }
        }
        return root.child(at: path)
    }

    /// The index for `order` at `path`, if one is kept.
    public func index(at path: Path, order: Query.Order) -> ChildIndex? {
        indexes[IndexID(path: path, order: order)]
    }

    /// The children at `path` selected by `query`, using an index when one is kept.
    public func run(_ query: Query, at path: Path) -> [(key: ChildKey, value: Node)] {
        root.child(at: path).run(query, index: query.usesIndex ? index(at: path, order: query.order) : nil)
    }

    /// The result of `query` at `path` as the object REST returns (null when empty).
    public func queryValue(_ query: Query, at path: Path) -> Node {
        root.child(at: path).queried(query, index: query.usesIndex ? index(at: path, order: query.order) : nil)
    }

    // MARK: - Indexes

    /// A version that also keeps an index for `order` at `path` (built now, then maintained).
    public func addingIndex(at path: Path, order: Query.Order) -> DatabaseState {
        let id = IndexID(path: path, order: order)
        guard indexes[id] == nil else { return self }
        var copy = self
        copy.indexes.insert(id, ChildIndex(order: order, over: root.child(at: path)))
        return copy
    }

    /// A version that no longer keeps the index for `order` at `path`.
    public func removingIndex(at path: Path, order: Query.Order) -> DatabaseState {
        var copy = self
        copy.indexes.remove(IndexID(path: path, order: order))
        return copy
    }

    // MARK: - Writing

    /// Checks, resolves and applies a client's write.
    ///
    /// - Parameter now: the server time in milliseconds, for server values.
    /// - Returns: the new version and the write as it will be logged.
    /// - Throws: ``HearthError`` when the write is invalid; nothing is changed then.
    public func applying(_ write: Write, now: Int64) throws(HearthError) -> (DatabaseState, ResolvedWrite) {
        let resolved: ResolvedWrite
        switch write {
        case .set(let path, let parsed):
            try Self.checkDepth(path: path, parsed: parsed)
            resolved = .set(path, try resolve(parsed, at: path, now: now))
        case .update(let base, let entries):
            let sorted = entries.sorted { Path.compare($0.path, $1.path) < 0 }
            for (previous, next) in zip(sorted, sorted.dropFirst()) where previous.path.contains(next.path) {
                throw HearthError(
                    .invalidData,
                    "Invalid data; path \(previous.path) is an ancestor of \(next.path) in the same update."
                )
            }
            var resolvedEntries: [ResolvedWrite.UpdateEntry] = []
            resolvedEntries.reserveCapacity(entries.count)
            for entry in entries {
                let absolute = base.appending(entry.path)
                try Self.checkDepth(path: absolute, parsed: entry.value)
                resolvedEntries.append(.init(path: entry.path, value: try resolve(entry.value, at: absolute, now: now)))
            }
            resolved = .update(base, resolvedEntries)
        }
        return (applying(resolved), resolved)
    }

    /// Applies a resolved write (from the log, or from ``applying(_:now:)``).
    public func applying(_ write: ResolvedWrite) -> DatabaseState {
        var next = self
        switch write {
        case .set(let path, let value):
            next.root = root.setting(value, at: path)
        case .update(let base, let entries):
            for entry in entries {
                next.root = next.root.setting(entry.value, at: base.appending(entry.path))
            }
        }
        if !indexes.isEmpty {
            for path in write.changedPaths { next.updateIndexes(changedAt: path, previousRoot: root) }
        }
        return next
    }

    private func resolve(_ parsed: JSONParser.Parsed, at path: Path, now: Int64) throws(HearthError) -> Node {
        guard parsed.hasServerValues else { return parsed.node }
        return try ServerValues.resolve(parsed.node, existing: root.child(at: path), now: now)
    }

    private static func checkDepth(path: Path, parsed: JSONParser.Parsed) throws(HearthError) {
        guard path.count + parsed.depth <= Path.maxDepth else {
            throw HearthError(.invalidData, "Invalid data; the data exceeds the maximum depth of 32 levels.")
        }
    }

    private mutating func updateIndexes(changedAt path: Path, previousRoot: Node) {
        // Indexes above the change: one child moved.
        for length in 0..<path.count {
            let key = path.keys[length]
            if key == Node.priorityKey { continue }
            let location = Path(keys: Array(path.keys[0..<length]))
            for (id, var index) in indexes.entries(from: { Path.compare($0.path, location) < 0 }) {
                guard id.path == location else { break }
                let old = previousRoot.child(at: location).child(key)
                let new = root.child(at: location).child(key)
                index.update(key: key, old: old, new: new)
                indexes.insert(id, index)
            }
        }
        // Indexes at or below the change: their location was replaced wholesale.
        var rebuilt: [(IndexID, ChildIndex)] = []
        for (id, index) in indexes.entries(from: { Path.compare($0.path, path) < 0 }) {
            guard path.contains(id.path) else { break }
            rebuilt.append((id, ChildIndex(order: index.order, over: root.child(at: id.path))))
        }
        for (id, index) in rebuilt { indexes.insert(id, index) }
    }
}
