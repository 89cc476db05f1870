extension Node {
    /// The number of nodes in this value — itself, and every object and leaf under it; 0 for
    /// null — counted only up to `cap`, so asking about a huge subtree is bounded work.
    /// - Returns: the count (at most `cap`), and whether the subtree has more nodes than `cap`.
    public func nodeCount(upTo cap: Int) -> (count: Int, more: Bool) {
        if isNull { return (0, false) }
        var count = 0
        // Depth-first with an explicit stack of iterators: values may be 32 levels deep and
        // children are visited lazily, so a capped count never walks more than `cap` nodes.
        var stack: [Children.Iterator] = []
        var next: Node? = self
        while true {
            if let node = next {
                count += 1
                if count > cap { return (cap, true) }
                if let children = node.children { stack.append(children.makeIterator()) }
            }
            guard !stack.isEmpty else { return (count, false) }
            if let (_, child) = stack[stack.count - 1].next() {
                next = child
            } else {
                stack.removeLast()
                next = nil
            }
        }
    }
}
