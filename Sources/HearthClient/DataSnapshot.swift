import Foundation
import HearthCore

/// The value at a location at one moment, as Firebase's `DataSnapshot`: decode it with
/// ``value(as:)``, walk it with ``children`` and ``childSnapshot(forPath:)``.
public struct DataSnapshot: Sendable, Equatable {
    /// Where the value is.
    public let ref: DatabaseReference
    let node: Node
    /// The order ``children`` come in.
    let order: Query

    init(ref: DatabaseReference, node: Node, order: Query = Query(order: .priority)) {
        self.ref = ref
        self.node = node
        self.order = order
    }

    public var key: String? { ref.key }

    /// False when there is nothing here (null).
    public var exists: Bool { !node.isNull }

    public var childrenCount: Int { node.childCount }

    public func hasChild(_ path: String) -> Bool { !childSnapshot(forPath: path).node.isNull }

    /// The snapshot of a child (`"author/uid"` goes two levels down); empty if it does not exist.
    public func childSnapshot(forPath path: String) -> DataSnapshot {
        let child = ref.child(path)
        return DataSnapshot(ref: child, node: node.child(at: child.path.dropFirst(ref.path.count)))
    }

    /// The children, in the query's order (priority, then key, for a plain location).
    public var children: [DataSnapshot] {
        var unlimited = order
        unlimited.limit = nil
        unlimited.start = nil
        unlimited.end = nil
        return node.run(unlimited).map { DataSnapshot(ref: ref.child($0.key.string), node: $0.value) }
    }

    /// The children's keys, in order.
    public var childKeys: [String] { children.compactMap(\.key) }

    /// The value decoded with `JSONDecoder` (objects whose keys are 0, 1, … decode as arrays).
    /// - Throws: `DecodingError` when it does not fit `T` (a missing value is null).
    public func value<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(JSONWriter.bytes(node)))
    }

    /// The value as a ``DatabaseValue`` (for untyped use).
    public var value: DatabaseValue { DatabaseValue(node: node) }

    /// The value as JSON text.
    public var json: String { JSONWriter.string(node) }

    /// The value with its priorities, as Firebase's `valueInExportFormat`: `.priority` inside
    /// objects, `{".value": v, ".priority": p}` for a leaf that has one.
    public var exportValue: DatabaseValue { DatabaseValue(node: node) }

    /// The priority here, or nil.
    public var priority: DatabaseValue? {
        switch node.priority {
        case .number(let number)?: return DatabaseValue(number)
        case .string(let text)?: return DatabaseValue(text)
        case nil: return nil
        }
    }

    /// A number stored here, if it is one.
    public var number: Double? { node.numberValue }

    /// A string stored here, if it is one.
    public var string: String? {
        if case .string(let text) = node.unprioritized { return text }
        return nil
    }

    /// A boolean stored here, if it is one.
    public var bool: Bool? {
        if case .bool(let flag) = node.unprioritized { return flag }
        return nil
    }

    public static func == (lhs: DataSnapshot, rhs: DataSnapshot) -> Bool {
        lhs.ref == rhs.ref && lhs.node == rhs.node
    }
}

/// What a listener is told, as Firebase's `DataEventType`.
public enum DataEventType: Sendable, Hashable, CaseIterable {
    /// The whole value, first as it is and then after every change.
    case value
    case childAdded
    case childChanged
    case childRemoved
    /// A child's position in the query's order changed.
    case childMoved
}

/// One event from a listener.
public struct DataEvent: Sendable, Equatable {
    public let type: DataEventType
    /// The whole value (`.value`) or the child concerned.
    public let snapshot: DataSnapshot
    /// The key of the child just before this one in the query's order (child events).
    public let previousSiblingKey: String?
}
