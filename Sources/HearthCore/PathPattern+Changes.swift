extension PathPattern {
    /// A location the pattern matches whose value a write changed.
    public struct Change: Sendable, Equatable {
        /// The matched location.
        public var path: Path
        /// What the pattern's captures matched there.
        public var parameters: [String: String]
        /// Its value before the write (null when the write created it).
        public var before: Node
        /// Its value after the write (null when the write deleted it).
        public var after: Node

        public init(path: Path, parameters: [String: String], before: Node, after: Node) {
            self.path = path
            self.parameters = parameters
            self.before = before
            self.after = after
        }
    }

    /// The locations this pattern matches whose values changed when the tree went from
    /// `before` to `after` by a write that replaced the values at `changedPaths` (a write's
    /// ``ResolvedWrite/changedPaths``), in key order.
    ///
    /// Only what the write touched is visited: a write at `/posts/p1/text` looks at one post
    /// whatever the size of `/posts`; a write at `/posts` (or above) looks at every post it
    /// replaced or removed. A location changes when any value at or below it changed, as
    /// Firebase's triggers fire at `/posts/{id}` for a write to `/posts/p1/text`.
    public func changes(from before: Node, to after: Node, changedPaths: [Path]) -> [Change] {
        // A priority's path touches the node whose priority it is.
        let touched = changedPaths.map { $0.isPriorityPath ? $0.parent ?? .root : $0 }
        var found: [Change] = []
        visit(depth: 0, keys: [], before: before, after: after, touched: touched, covered: false, parameters: [:], into: &found)
        return found
    }

    private func visit(
        depth: Int, keys: [ChildKey], before: Node, after: Node, touched: [Path], covered: Bool,
        parameters: [String: String], into found: inout [Change]
    ) {
        // `covered`: the write replaced a value at or above this level, so all of it may differ.
        let covered = covered || touched.contains { $0.count <= depth }
        guard covered || !touched.isEmpty else { return }
        guard depth < segments.count else {
            if before != after {
                found.append(Change(path: Path(keys: keys), parameters: parameters, before: before, after: after))
            }
            return
        }
        func descend(_ key: ChildKey, capture: String?) {
            var parameters = parameters
            if let capture { parameters[capture] = key.string }
            let below = covered ? [] : touched.filter { $0.keys[depth] == key }
            visit(
                depth: depth + 1, keys: keys + [key], before: before.child(key), after: after.child(key),
                touched: below, covered: covered, parameters: parameters, into: &found)
        }
        switch segments[depth] {
        case .literal(let key):
            descend(key, capture: nil)
        case .wildcard(let capture):
            let candidates = covered
                ? Self.mergedKeys(before.children, after.children)
                : Array(Set(touched.map { $0.keys[depth] })).sorted()
            for key in candidates { descend(key, capture: capture) }
        }
    }

    /// The keys of two sorted child lists, merged in order without repeats.
    public static func mergedKeys(_ left: Children?, _ right: Children?) -> [ChildKey] {
        var merged: [ChildKey] = []
        var lefts = (left.map { Array($0.lazy.map(\.key)) } ?? [])[...]
        var rights = (right.map { Array($0.lazy.map(\.key)) } ?? [])[...]
        merged.reserveCapacity(max(lefts.count, rights.count))
        while let l = lefts.first, let r = rights.first {
            let order = ChildKey.compare(l, r)
            if order <= 0 { merged.append(l); lefts.removeFirst() }
            if order >= 0 {
                if order > 0 { merged.append(r) }
                rights.removeFirst()
            }
        }
        merged += lefts
        merged += rights
        return merged
    }
}
