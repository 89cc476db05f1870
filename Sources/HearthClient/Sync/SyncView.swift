import HearthCore

/// One listener's wish: which events, for which view.
struct Registration: Sendable {
    let id: Int
    let types: Set<DataEventType>
}

/// An event for one registration, before it becomes a ``DataEvent`` (free of the client's types).
struct ViewEvent: Sendable {
    let registration: Int
    let type: DataEventType
    /// The snapshot's location: the view's for value events, the child's for child events.
    let path: Path
    let node: Node
    let previousKey: String?
    /// The order a value snapshot lists its children in.
    let order: Query
}

/// What a view shows at one moment.
struct ViewResult: Sendable {
    /// The children in the query's order (the window, for a limited query).
    var entries: [(key: ChildKey, value: Node)]
    /// What a value event carries: the whole value, or only the selected children for a
    /// query with a range or limit (without the location's priority, as Firebase's).
    var node: Node
    /// False until the data is known in full: until then, child events only, no value event.
    var complete: Bool

    static let empty = ViewResult(entries: [], node: .null, complete: false)

    /// Where the child at `position` is (or would go) in ``entries``: binary search.
    func index(of position: IndexEntry, query: Query) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let entry = entries[middle]
            if IndexEntry.compare(IndexEntry(value: query.sortValue(of: entry.value), key: entry.key), position) < 0 {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}

/// One query's local view: its listeners, its own server data when it is a filtered query
/// that no plain listen covers, and what it showed last.
struct SyncView: Sendable {
    let key: ViewKey
    /// The query in force (Firebase's default order, by priority, for a plain location).
    let query: Query
    var registrations: [Registration] = []
    /// A filtered query's server data: the window the server sent for its own listen.
    var window = KnownNode.unknown
    /// What the listeners were last told.
    var result = ViewResult.empty
    /// The order of creation, which breaks ties between views at one location.
    let sequence: Int

    init(key: ViewKey, query: Query?, sequence: Int) {
        self.key = key
        self.query = query ?? Query(order: .priority)
        self.sequence = sequence
    }

    /// True for a query with a range or a limit: its server data is a selection.
    var isFiltered: Bool { !query.loadsAllData }

    /// The result for `known`, the data at the view's location with local writes laid over.
    func result(for known: KnownNode) -> ViewResult {
        let entries = known.node.run(query)
        if isFiltered {
            var children = Children()
            for entry in entries { children.insert(entry.key, entry.value) }
            return ViewResult(entries: entries, node: children.isEmpty ? .null : .object(children), complete: known.complete)
        }
        return ViewResult(entries: entries, node: known.node, complete: known.complete)
    }

    /// A filtered query's selection of `node`, as its server data keeps it.
    func clipped(_ node: Node) -> Node {
        isFiltered ? result(for: .complete(node)).node : node
    }

    /// Moves to `next` and returns the events that tell the listeners, in Firebase's order.
    mutating func update(to next: ViewResult) -> [ViewEvent] {
        let previous = result
        result = next
        return EventGenerator.events(from: previous, to: next, at: key.path, query: query, for: registrations)
    }

    /// The same for a change to the children `keys` only (below the view's location) of an
    /// unfiltered view: the ordered children are updated in place and only those children
    /// compared, instead of the whole list.
    mutating func update(to known: KnownNode, changing keys: Set<ChildKey>) -> [ViewEvent] {
        guard !isFiltered, known.complete == result.complete else { return update(to: result(for: known)) }
        let previous = result
        var entries = previous.entries
        for key in keys {
            let oldChild = previous.node.child(at: Path(keys: [key]))
            let newChild = known.node.child(at: Path(keys: [key]))
            guard oldChild != newChild else { continue }
            var next = ViewResult(entries: entries, node: .null, complete: false)
            if !oldChild.isNull {
                let index = next.index(of: IndexEntry(value: query.sortValue(of: oldChild), key: key), query: query)
                if index < entries.count, entries[index].key == key { entries.remove(at: index) }
                next.entries = entries
            }
            if !newChild.isNull {
                entries.insert((key, newChild), at: next.index(of: IndexEntry(value: query.sortValue(of: newChild), key: key), query: query))
            }
        }
        result = ViewResult(entries: entries, node: known.node, complete: known.complete)
        return EventGenerator.events(from: previous, to: result, changing: keys, at: key.path, query: query, for: registrations)
    }

    /// The events a newly added registration gets at once from what the view holds.
    func initialEvents(for registration: Registration) -> [ViewEvent] {
        EventGenerator.events(from: .empty, to: result, at: key.path, query: query, for: [registration])
    }
}
