import HearthCore

/// A location with an optional ordering, range and limit on its children, as Firebase's
/// `DatabaseQuery`: `ref.queryOrdered(byChild: "stars").queryLimited(toLast: 20)`.
public struct DatabaseQuery: Sendable {
    public let database: Database
    let path: Path
    /// The ordering and filters; nil for a plain location (children in priority-then-key order).
    let spec: Query?

    init(database: Database, path: Path, spec: Query?) {
        self.database = database
        self.path = path
        self.spec = spec
    }

    /// The location queried.
    public var ref: DatabaseReference { DatabaseReference(database: database, path: path) }

    /// The order children come in: the query's, or Firebase's default (priority, then key).
    var order: Query { spec ?? Query(order: .priority) }

    private func with(_ change: (inout Query) -> Void) -> DatabaseQuery {
        var query = spec ?? Query(order: .priority)
        change(&query)
        return DatabaseQuery(database: database, path: path, spec: query)
    }

    // MARK: - Ordering

    /// Children ordered by the value at `path` inside each (`"author/uid"` works).
    public func queryOrdered(byChild path: String) -> DatabaseQuery {
        let keys = Path.keys(splitting: path)
        return with { $0.order = .child(Path(keys: keys)) }
    }

    public func queryOrderedByKey() -> DatabaseQuery { with { $0.order = .key } }
    public func queryOrderedByValue() -> DatabaseQuery { with { $0.order = .value } }
    public func queryOrderedByPriority() -> DatabaseQuery { with { $0.order = .priority } }

    // MARK: - Ranges

    /// Children from `value` on (and, for equal values, from `key` on).
    public func queryStarting(atValue value: DatabaseValue, childKey key: String? = nil) -> DatabaseQuery {
        with { $0.start = Query.Bound(value: value.node, key: key.map(ChildKey.init), inclusive: true) }
    }

    public func queryStarting(afterValue value: DatabaseValue, childKey key: String? = nil) -> DatabaseQuery {
        with { $0.start = Query.Bound(value: value.node, key: key.map(ChildKey.init), inclusive: false) }
    }

    public func queryEnding(atValue value: DatabaseValue, childKey key: String? = nil) -> DatabaseQuery {
        with { $0.end = Query.Bound(value: value.node, key: key.map(ChildKey.init), inclusive: true) }
    }

    public func queryEnding(beforeValue value: DatabaseValue, childKey key: String? = nil) -> DatabaseQuery {
        with { $0.end = Query.Bound(value: value.node, key: key.map(ChildKey.init), inclusive: false) }
    }

    public func queryEqual(toValue value: DatabaseValue, childKey key: String? = nil) -> DatabaseQuery {
        with { query in
            let bound = Query.Bound(value: value.node, key: key.map(ChildKey.init), inclusive: true)
            query.start = bound
            query.end = bound
        }
    }

    // MARK: - Limits

    public func queryLimited(toFirst count: Int) -> DatabaseQuery { with { $0.limit = .first(count) } }
    public func queryLimited(toLast count: Int) -> DatabaseQuery { with { $0.limit = .last(count) } }

    /// The query as REST parameters (`orderBy`, `startAt`, …); none for a plain location.
    var parameters: [(String, String)] {
        guard let spec else { return [] }
        var parameters: [(String, String)] = []
        let order: String
        switch spec.order {
        case .key: order = "$key"
        case .value: order = "$value"
        case .priority: order = "$priority"
        case .child(let path): order = path.keys.map(\.string).joined(separator: "/")
        }
        parameters.append(("orderBy", JSONWriter.string(.string(order))))
        func text(_ bound: Query.Bound) -> String {
            var text = JSONWriter.string(bound.value)
            if let key = bound.key { text += "," + JSONWriter.string(.string(key.string)) }
            return text
        }
        if let start = spec.start, let end = spec.end, start == end, start.inclusive {
            parameters.append(("equalTo", text(start)))
        } else {
            if let start = spec.start { parameters.append((start.inclusive ? "startAt" : "startAfter", text(start))) }
            if let end = spec.end { parameters.append((end.inclusive ? "endAt" : "endBefore", text(end))) }
        }
        switch spec.limit {
        case .first(let count)?: parameters.append(("limitToFirst", String(count)))
        case .last(let count)?: parameters.append(("limitToLast", String(count)))
        case nil: break
        }
        return parameters
    }
}
