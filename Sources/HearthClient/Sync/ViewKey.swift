import HearthCore

/// Identifies one local view: a location and a query, as Firebase's `queryIdentifier` does
/// (`"default"` for a plain location or one ordered by priority alone).
struct ViewKey: Hashable, Sendable, CustomStringConvertible {
    let path: Path
    let identifier: String

    static let defaultIdentifier = "default"

    init(path: Path, query: Query?) {
        self.path = path
        self.identifier = query.map(Self.identifier(of:)) ?? Self.defaultIdentifier
    }

    init(path: Path, identifier: String) {
        self.path = path
        self.identifier = identifier
    }

    var isDefault: Bool { identifier == Self.defaultIdentifier }

    var description: String { "\(path) \(identifier)" }

    /// The query's wire object (compact JSON, keys sorted), or `default` when it is empty.
    static func identifier(of query: Query) -> String {
        query.wireObject ?? defaultIdentifier
    }
}

extension Query {
    /// True when the query selects every child (no range, no limit): such a view needs the
    /// whole location, which a plain listen provides.
    var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// The realtime protocol's query object (docs/protocol.md §8) as compact JSON with sorted keys:
    /// `i` the index unless priority, `sp`/`sn`/`sin` the start, `ep`/`en`/`ein` the end, `l`
    /// and `vf` the limit. Nil when empty. (Built by hand: a null bound must stay present.)
    var wireObject: String? {
        var fields: [(String, Node)] = []
        switch order {
        case .priority: break
        case .key: fields.append(("i", .string(".key")))
        case .value: fields.append(("i", .string(".value")))
        case .child(let path): fields.append(("i", .string(path.keys.map(\.string).joined(separator: "/"))))
        }
        if let start {
            fields.append(("sp", start.value))
            if let key = start.key { fields.append(("sn", .string(key.string))) }
            fields.append(("sin", .bool(start.inclusive)))
        }
        if let end {
            fields.append(("ep", end.value))
            if let key = end.key { fields.append(("en", .string(key.string))) }
            fields.append(("ein", .bool(end.inclusive)))
        }
        switch limit {
        case .first(let count)?:
            fields.append(("l", .int(Int64(count))))
            fields.append(("vf", .string("l")))
        case .last(let count)?:
            fields.append(("l", .int(Int64(count))))
            fields.append(("vf", .string("r")))
        case nil:
            break
        }
        guard !fields.isEmpty else { return nil }
        fields.sort { $0.0 < $1.0 }
        return "{" + fields.map { JSONWriter.string(.string($0.0)) + ":" + JSONWriter.string($0.1) }.joined(separator: ",") + "}"
    }
}
