extension Node {
    static let priorityKey = ChildKey(".priority")

    /// A copy with the child `key` replaced (null removes it). Only the nodes on the path are
    /// rebuilt; every untouched child is shared with `self`.
    public func updatingChild(_ key: ChildKey, to newChild: Node) -> Node {
        if key == Self.priorityKey {
            return withPriority(Self.priority(of: newChild))
        }
        switch unprioritized {
        case .object(let children):
            let updated = newChild.isNull ? children.removing(key) : children.inserting(key, newChild)
            return updated.isEmpty ? .null : Node.object(updated).withPriority(priority)
        default:
            if newChild.isNull { return self }
            let children = Children(sortedUniqueEntries: [(key, newChild)])
            return Node.object(children).withPriority(priority)
        }
    }

    /// A copy with `value` stored at `path` (null deletes), rebuilding only the nodes on the path.
    public func setting(_ value: Node, at path: Path) -> Node {
        setting(value, at: path.keys[...])
    }

    private func setting(_ value: Node, at keys: ArraySlice<ChildKey>) -> Node {
        guard let first = keys.first else { return value }
        if keys.count == 1 { return updatingChild(first, to: value) }
        let child = self.child(first)
        return updatingChild(first, to: child.setting(value, at: keys.dropFirst()))
    }

    /// The priority a `.priority` write stores: a number or string leaf; anything else clears it.
    static func priority(of node: Node) -> Priority? {
        switch node.unprioritized {
        case .int(let value): return .number(Double(value))
        case .double(let value): return .number(value)
        case .string(let value): return .string(value)
        default: return nil
        }
    }
}
