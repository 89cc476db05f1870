extension Node {
    /// What ``findKeys(containing:maxResults:maxNodes:)`` found.
    public struct KeyMatches: Sendable, Equatable {
        /// One node whose key matched: its path below the searched node, and the node.
        public struct Match: Sendable, Equatable {
            public var path: Path
            public var node: Node

            public init(path: Path, node: Node) {
                self.path = path
                self.node = node
            }
        }

        /// Why a search ended before it had looked at every node.
        public enum Stop: String, Sendable, Equatable {
            /// It found as many matches as asked for.
            case results
            /// It looked at as many nodes as it was allowed to.
            case nodes
        }

        /// The matches in key order, depth first (a parent before its children).
        public var matches: [Match]
        /// How many nodes below the searched one were looked at.
        public var visited: Int
        /// Nil when every node was looked at.
        public var stoppedAt: Stop?

        public init(matches: [Match], visited: Int, stoppedAt: Stop?) {
            self.matches = matches
            self.visited = visited
            self.stoppedAt = stoppedAt
        }
    }

    /// The nodes below this one whose key contains `text`, ignoring case (the search node's own
    /// key is not part of it), depth first in key order: at most `maxResults` of them, looking at
    /// no more than `maxNodes` nodes, so a search of a huge tree is bounded work.
    /// - Precondition: `text` is not empty; both bounds are at least 1.
    public func findKeys(containing text: String, maxResults: Int, maxNodes: Int) -> KeyMatches {
        precondition(!text.isEmpty && maxResults > 0 && maxNodes > 0)
        let needle = text.lowercased()
        var matches: [KeyMatches.Match] = []
        var visited = 0
        // An explicit stack of iterators, as in nodeCount(upTo:): values may be 32 levels deep
        // and children are visited lazily.
        var stack: [Children.Iterator] = []
        var keys: [ChildKey] = []
        if let children { stack.append(children.makeIterator()) }
        while !stack.isEmpty {
            guard let (key, child) = stack[stack.count - 1].next() else {
                stack.removeLast()
                if !keys.isEmpty { keys.removeLast() }
                continue
            }
            if visited == maxNodes { return KeyMatches(matches: matches, visited: visited, stoppedAt: .nodes) }
            visited += 1
            if key.string.lowercased().contains(needle) {
                if matches.count == maxResults { return KeyMatches(matches: matches, visited: visited, stoppedAt: .results) }
                matches.append(.init(path: Path(keys: keys + [key]), node: child))
            }
            if let grandchildren = child.children {
                keys.append(key)
                stack.append(grandchildren.makeIterator())
            }
        }
        return KeyMatches(matches: matches, visited: visited, stoppedAt: nil)
    }
}
