/// Server values: `{".sv":"timestamp"}` and `{".sv":{"increment":n}}` placeholders in a write,
/// replaced by the server's time or by the sum with the value already stored.
public enum ServerValues {
    static let key = ChildKey(".sv")

    /// The unresolved form a parser keeps: an object with the single key `.sv`.
    static func placeholder(_ value: Node) -> Node {
        .object(Children(sortedUniqueEntries: [(key, value)]))
    }

    /// The `.sv` payload when `node` is a placeholder.
    static func placeholderValue(_ node: Node) -> Node? {
        guard case .object(let children) = node, children.count == 1, let value = children[key] else { return nil }
        return value
    }

    /// Replaces every placeholder in `node`, reading increments against `existing`, the value
    /// stored at the same location before the write.
    /// - Parameter now: the server's time in milliseconds since the epoch.
    /// - Throws: ``HearthError`` for a placeholder Firebase does not define.
    public static func resolve(_ node: Node, existing: Node, now: Int64) throws(HearthError) -> Node {
        if let payload = placeholderValue(node.unprioritized) {
            // `{".value": {".sv": …}, ".priority": p}` keeps its priority once resolved.
            return try resolvePlaceholder(payload, existing: existing, now: now).withPriority(node.priority)
        }
        guard case .object(let children) = node.unprioritized else { return node }
        var resolved = children
        for (key, child) in children {
            let value = try resolve(child, existing: existing.child(key), now: now)
            // A child with a priority is `.prioritized`; its placeholders need resolving too.
            if case .object = child.unprioritized { resolved.insert(key, value) }
        }
        return Node.object(resolved).withPriority(node.priority)
    }

    private static func resolvePlaceholder(_ payload: Node, existing: Node, now: Int64) throws(HearthError) -> Node {
        if case .string("timestamp") = payload { return .int(now) }
        if case .object(let spec) = payload, spec.count == 1, let delta = spec[ChildKey("increment")] {
            switch (existing.unprioritized, delta) {
            case let (.int(current), .int(step)):
                let (sum, overflow) = current.addingReportingOverflow(step)
                return overflow ? .double(Double(current) + Double(step)) : .int(sum)
            case (_, .int), (_, .double):
                guard let current = existing.numberValue else { return delta }
                return .double(current + delta.numberValue!)
            default:
                break
            }
        }
        throw HearthError(.invalidData, "Invalid data; unrecognized server value \(JSONWriter.string(payload)).")
    }
}
