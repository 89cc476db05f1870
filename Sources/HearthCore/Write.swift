/// A write as a client asked for it, with values still holding server-value placeholders.
public enum Write: Sendable {
    /// Replace the value at a path (null deletes). POST is a set at a new push ID.
    case set(Path, JSONParser.Parsed)
    /// Set several paths relative to a base path at once (PATCH).
    case update(Path, [(path: Path, value: JSONParser.Parsed)])

    /// A set of an already-built value, for callers that do not parse JSON.
    public static func set(_ path: Path, _ node: Node) -> Write {
        .set(path, JSONParser.Parsed(node: node, depth: node.depth, hasServerValues: true))
    }
}

/// A write after server values were resolved: exactly what is logged and replayed.
public enum ResolvedWrite: Sendable, Equatable {
    case set(Path, Node)
    case update(Path, [UpdateEntry])

    /// One path of a multi-location update, relative to the update's base path.
    public struct UpdateEntry: Sendable, Equatable {
        public var path: Path
        public var value: Node

        public init(path: Path, value: Node) {
            self.path = path
            self.value = value
        }
    }

    /// The path the write is anchored at.
    public var path: Path {
        switch self {
        case .set(let path, _), .update(let path, _): return path
        }
    }

    /// The absolute paths whose values this write replaces.
    public var changedPaths: [Path] {
        switch self {
        case .set(let path, _): return [path]
        case .update(let base, let entries): return entries.map { base.appending($0.path) }
        }
    }
}

extension Node {
    /// How many levels of objects the node nests (0 for a leaf or null).
    public var depth: Int {
        guard let children else { return 0 }
        var deepest = 0
        for (_, child) in children { deepest = max(deepest, child.depth) }
        return deepest + 1
    }
}
