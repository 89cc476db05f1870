extension ResolvedWrite {
    /// Splits a large set into a sequence of writes, each rendering to about `maxBytes` of JSON
    /// or less, that leave the same tree when applied in order. Used to log very large writes
    /// (imports) without one enormous record; the pieces are committed together.
    public static func chunkedSet(_ value: Node, at path: Path, maxBytes: Int) -> [ResolvedWrite] {
        var writes: [ResolvedWrite] = [.set(path, .null)]
        appendChunks(value, at: path, maxBytes: maxBytes, into: &writes)
        if writes.count == 2, case .set(_, let node) = writes[1] { return [.set(path, node)] }
        return writes
    }

    private static func appendChunks(_ value: Node, at path: Path, maxBytes: Int, into writes: inout [ResolvedWrite]) {
        guard let children = value.children, path.count < Path.maxDepth, value.estimatedSize > maxBytes else {
            if !value.isNull { writes.append(.set(path, value)) }
            return
        }
        var group: [UpdateEntry] = []
        var groupBytes = 0
        func flush() {
            if !group.isEmpty { writes.append(.update(path, group)) }
            group = []
            groupBytes = 0
        }
        for (key, child) in children {
            let size = child.estimatedSize + key.string.utf8.count + 4
            if size > maxBytes {
                flush()
                appendChunks(child, at: path.child(key), maxBytes: maxBytes, into: &writes)
                continue
            }
            if groupBytes + size > maxBytes { flush() }
            group.append(UpdateEntry(path: Path(keys: [key]), value: child))
            groupBytes += size
        }
        flush()
        if let priority = value.priority {
            let priorityNode: Node
            switch priority {
            case .number(let number): priorityNode = .double(number)
            case .string(let text): priorityNode = .string(text)
            }
            writes.append(.set(path.child(Node.priorityKey), priorityNode))
        }
    }
}

extension Node {
    /// Roughly how many bytes the node takes as JSON; exact enough for splitting work.
    public var estimatedSize: Int {
        switch self {
        case .null: return 4
        case .bool: return 5
        case .int, .double: return 12
        case .string(let text): return text.utf8.count + 2
        case .prioritized(let inner, _): return inner.estimatedSize + 24
        case .object(let children):
            var total = 2
            for (key, child) in children { total += key.string.utf8.count + 4 + child.estimatedSize }
            return total
        }
    }
}
