import HearthCore

/// What this device knows of the value at one location: all of it (`complete`), or only some
/// children, each known in full (`completeChildren`). Free of I/O.
struct KnownNode: Sendable {
    /// The value; when not complete, only the children in ``completeChildren`` are in it.
    var node: Node
    var complete: Bool
    /// The children known in full (null ones included) while the whole is not.
    var completeChildren: Set<ChildKey> = []

    static let unknown = KnownNode(node: .null, complete: false)

    static func complete(_ node: Node) -> KnownNode { KnownNode(node: node, complete: true) }

    /// Stores `value` at `relative` below this location. A value for a child that is not known in
    /// full is dropped when it sets only part of that child (the rest of it is still unknown),
    /// as Firebase's SDKs do.
    mutating func set(_ value: Node, at relative: Path) {
        guard let first = relative.first else {
            node = value
            complete = true
            completeChildren = []
            return
        }
        if complete {
            node = node.setting(value, at: relative)
        } else if relative.count == 1 {
            node = node.setting(value, at: relative)
            completeChildren.insert(first)
        } else if completeChildren.contains(first) {
            node = node.setting(value, at: relative)
        }
    }

    /// Applies a write of `value` at `writePath` to this knowledge of `location`.
    mutating func apply(_ value: Node, writtenAt writePath: Path, to location: Path) {
        if writePath.contains(location) {
            set(value.child(at: location.dropFirst(writePath.count)), at: .root)
        } else if location.contains(writePath) {
            set(value, at: writePath.dropFirst(location.count))
        }
    }
}
