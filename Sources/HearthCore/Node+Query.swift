extension Node {
    /// The children selected by `query`, in the query's order.
    ///
    /// With an `index` for the same ordering, or when ordering by key, only the entries in the
    /// range (and within the limit) are visited: O(log n + k). Otherwise every child is sorted.
    public func run(_ query: Query, index: ChildIndex? = nil) -> [(key: ChildKey, value: Node)] {
        guard let children else { return [] }
        if case .key = query.order {
            return runByKey(query, children: children)
        }
        let range = QueryRange(query)
        if let index, index.order == query.order {
            return Self.select(range: range, limit: query.limit, tree: index.entries)
        }
        var entries: [(IndexEntry, Node)] = []
        entries.reserveCapacity(children.count)
        for (key, child) in children {
            let entry = IndexEntry(value: query.sortValue(of: child), key: key)
            if range.contains(entry) { entries.append((entry, child)) }
        }
        entries.sort { IndexEntry.compare($0.0, $1.0) < 0 }
        switch query.limit {
        case .first(let count)?: entries = Array(entries.prefix(count))
        case .last(let count)?: entries = Array(entries.suffix(count))
        case nil: break
        }
        return entries.map { ($0.0.key, $0.1) }
    }

    private func runByKey(_ query: Query, children: Children) -> [(key: ChildKey, value: Node)] {
        let lower = query.start.flatMap { bound -> ((ChildKey) -> Bool)? in
            guard case .string(let text) = bound.value.unprioritized else { return nil }
            let key = ChildKey(text)
            return bound.inclusive ? { ChildKey.compare($0, key) < 0 } : { ChildKey.compare($0, key) <= 0 }
        }
        let upper = query.end.flatMap { bound -> ((ChildKey) -> Bool)? in
            guard case .string(let text) = bound.value.unprioritized else { return nil }
            let key = ChildKey(text)
            return bound.inclusive ? { ChildKey.compare($0, key) <= 0 } : { ChildKey.compare($0, key) < 0 }
        }
        var result: [(key: ChildKey, value: Node)] = []
        switch query.limit {
        case .last(let count)?:
            guard count > 0 else { return [] }
            for entry in children.entriesDescending(before: upper ?? { _ in true }) {
                if let lower, lower(entry.key) { break }
                result.append(entry)
                if result.count == count { break }
            }
            result.reverse()
        default:
            var count = Int.max
            if case .first(let limit)? = query.limit { count = limit }
            guard count > 0 else { return [] }
            for entry in children.entries(from: lower ?? { _ in false }) {
                if let upper, !upper(entry.key) { break }
                result.append(entry)
                if result.count == count { break }
            }
        }
        return result
    }

    private static func select(
        range: QueryRange,
        limit: Query.Limit?,
        tree: SortedTree<IndexEntry, Node>
    ) -> [(key: ChildKey, value: Node)] {
        var result: [(key: ChildKey, value: Node)] = []
        switch limit {
        case .last(let count)?:
            guard count > 0 else { return [] }
            for (entry, child) in tree.entriesDescending(before: { range.isWithinUpper($0) }) {
                if range.isBeforeLower(entry) { break }
                result.append((entry.key, child))
                if result.count == count { break }
            }
            result.reverse()
        default:
            var count = Int.max
            if case .first(let limit)? = limit { count = limit }
            guard count > 0 else { return [] }
            for (entry, child) in tree.entries(from: { range.isBeforeLower($0) }) {
                if !range.isWithinUpper(entry) { break }
                result.append((entry.key, child))
                if result.count == count { break }
            }
        }
        return result
    }

    /// The object of the selected children (null when none), as REST returns filtered results.
    public func queried(_ query: Query, index: ChildIndex? = nil) -> Node {
        let selected = run(query, index: index)
        guard !selected.isEmpty else { return .null }
        // Query results never repeat a key, so a plain sort by key is enough. Sorting positions
        // rather than the entries themselves spares a retain and release per move.
        let byKey = selected.indices.sorted { ChildKey.compare(selected[$0].key, selected[$1].key) < 0 }
        return .object(Children(sortedUniqueEntries: byKey.map { (selected[$0].key, selected[$0].value) }))
    }

    /// `shallow=true`: leaves as they are; an object's children each cut down to `true`.
    public var shallow: Node {
        guard let children else { return unprioritized }
        return .object(Children(sortedUniqueEntries: children.map { ($0.key, Node.bool(true)) }))
    }
}

/// The start and end of a query as predicates over index entries.
struct QueryRange {
    private let lower: (IndexPosition, inclusive: Bool)?
    private let upper: (IndexPosition, inclusive: Bool)?

    init(_ query: Query) {
        lower = query.start.map { bound in
            let key: IndexPosition.KeyBound = bound.key.map { .key($0) } ?? (bound.inclusive ? .min : .max)
            return (IndexPosition(value: SortValue(bound.value), key: key), bound.inclusive)
        }
        upper = query.end.map { bound in
            let key: IndexPosition.KeyBound = bound.key.map { .key($0) } ?? (bound.inclusive ? .max : .min)
            return (IndexPosition(value: SortValue(bound.value), key: key), bound.inclusive)
        }
    }

    /// True when `entry` sorts before the start of the range.
    func isBeforeLower(_ entry: IndexEntry) -> Bool {
        guard let (position, inclusive) = lower else { return false }
        let order = position.compare(entry)
        return inclusive ? order < 0 : order <= 0
    }

    /// True when `entry` does not sort after the end of the range.
    func isWithinUpper(_ entry: IndexEntry) -> Bool {
        guard let (position, inclusive) = upper else { return true }
        let order = position.compare(entry)
        return inclusive ? order <= 0 : order < 0
    }

    func contains(_ entry: IndexEntry) -> Bool {
        !isBeforeLower(entry) && isWithinUpper(entry)
    }
}
