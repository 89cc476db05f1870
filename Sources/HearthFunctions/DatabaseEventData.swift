import HearthCore

/// The `data` of a database CloudEvent, as Firebase's SDKs read it: `{"data": before,
/// "delta": change}`, where applying `delta` to `data` gives the value after (objects merge key
/// by key, a `null` removes a key, anything else replaces), which is how the SDKs rebuild
/// `event.data.after`. Values are plain JSON, without priorities.
enum DatabaseEventData {
    static func encode(before: Node, after: Node) -> [UInt8] {
        var output: [UInt8] = Array(#"{"data":"#.utf8)
        output += JSONWriter.bytes(before)
        output += Array(#","delta":"#.utf8)
        writeDelta(from: before.unprioritized, to: after.unprioritized, into: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// What turns `before` into `after` when merged into it: only the keys that changed when
    /// both are objects written as objects; `after` itself otherwise (arrays and leaves replace).
    private static func writeDelta(from before: Node, to after: Node, into output: inout [UInt8]) {
        guard let old = objectChildren(before), let new = objectChildren(after) else {
            output += JSONWriter.bytes(after)
            return
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        for key in PathPattern.mergedKeys(old, new) {
            let was = before.child(key).unprioritized
            let now = after.child(key).unprioritized
            guard was != now else { continue }
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            output += JSONWriter.bytes(.string(key.string))
            output.append(UInt8(ascii: ":"))
            writeDelta(from: was, to: now, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// The children of a node JSON writes as an object (not as an array), else nil.
    private static func objectChildren(_ node: Node) -> Children? {
        guard let children = node.children, JSONWriter.arrayLength(children) == nil else { return nil }
        return children
    }
}
