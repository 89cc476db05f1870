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
        if let direct = changesBelowPattern(from: before, to: after, touched: touched) { return direct }
        var found: [Change] = []
        visit(depth: 0, keys: [], before: before, after: after, touched: touched, covered: false, parameters: [:], into: &found)
        return found
    }

    /// The changes when every touched path is at or below the pattern's depth (the common
    /// case: a write to one record or a field of it), found without walking level by level:
    /// each touched path names the one location it can change. Nil when some touched path is
    /// above the pattern's depth, which ``visit`` handles. It runs for every write under the
    /// database writer's lock, so it allocates little.
    private func changesBelowPattern(from before: Node, to after: Node, touched: [Path]) -> [Change]? {
        let depth = segments.count
        var locations: [Path] = []
        // A multi-path update may touch thousands of paths: a set keeps finding repeats linear.
        var seen: Set<Path>? = touched.count > 8 ? [] : nil
        for path in touched {
            guard path.count >= depth else { return nil }
            guard matchesPrefix(of: path) else { continue }
            let location = path.count == depth ? path : Path(keys: Array(path.keys[..<depth]))
            let isNew = seen != nil ? seen!.insert(location).inserted : !locations.contains(location)
            if isNew { locations.append(location) }
        }
        if locations.count > 1 { locations.sort { Path.compare($0, $1) < 0 } }
        var found: [Change] = []
        for location in locations {
            let old = before.child(at: location)
            let new = after.child(at: location)
            guard old != new else { continue }
            var parameters: [String: String] = [:]
            for (segment, key) in zip(segments, location.keys) {
                if case .wildcard(let capture?) = segment { parameters[capture] = key.string }
            }
            found.append(Change(path: location, parameters: parameters, before: old, after: new))
        }
        return found
    }

    /// True when the first levels of `path` match the pattern's.
    private func matchesPrefix(of path: Path) -> Bool {
        for (segment, key) in zip(segments, path.keys) {
            if case .literal(let literal) = segment, literal != key { return false }
        }
        return true
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
