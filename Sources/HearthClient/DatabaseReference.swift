import Foundation
import HearthCore
import NIOHTTP1

/// A location in the database, as Firebase's `DatabaseReference`: navigate with ``child(_:)``,
/// ``parent`` and ``root``; write with ``setValue(_:)``, ``updateChildValues(_:)`` and
/// ``removeValue()``; read with ``getData()`` or listen with ``observe(_:)``.
public struct DatabaseReference: Sendable, Hashable, CustomStringConvertible {
    public let database: Database
    let path: Path

    init(database: Database, path: Path) {
        self.database = database
        self.path = path
    }

    /// The last segment of the path; nil at the root.
    public var key: String? { path.last?.string }

    /// The `/`-separated path from the root (empty at the root).
    public var pathString: String { path.keys.map(\.string).joined(separator: "/") }

    public var description: String { "/" + pathString }

    /// The location above, or nil at the root.
    public var parent: DatabaseReference? { path.parent.map { DatabaseReference(database: database, path: $0) } }

    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }

    /// The location at `path` below this one (`"a/b"` goes two levels down).
    public func child(_ path: String) -> DatabaseReference {
        let keys = path.split(separator: "/").map { ChildKey(String($0)) }
        return DatabaseReference(database: database, path: self.path.appending(Path(keys: keys)))
    }

    /// A new child under a push ID made on this device (time-ordered and unique).
    public func childByAutoId() -> DatabaseReference {
        child(database.nextPushID())
    }

    /// This location as a query with no ordering or filter.
    public var query: DatabaseQuery { DatabaseQuery(database: database, path: path, spec: nil) }

    public static func == (lhs: DatabaseReference, rhs: DatabaseReference) -> Bool {
        lhs.database === rhs.database && lhs.path == rhs.path
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(database))
        hasher.combine(path)
    }

    // MARK: - Writing

    /// Replaces the value here with `value` (encoded with `JSONEncoder`); nil deletes.
    public func setValue<T: Encodable>(_ value: T?) async throws {
        let node = try value.map { try DatabaseValue.node(encoding: $0) } ?? .null
        try await write(.PUT, node)
    }

    /// Replaces the value here.
    public func setValue(_ value: DatabaseValue) async throws {
        try await write(.PUT, value.node)
    }

    /// Sets several locations below this one at once, atomically: keys are relative paths
    /// (`"posts/\(id)"`, `"user-posts/\(uid)/\(id)"`), `nil`/``DatabaseValue/null`` deletes.
    public func updateChildValues(_ values: [String: DatabaseValue]) async throws {
        guard !values.isEmpty else { return }
        var entries: [ResolvedWrite.UpdateEntry] = []
        for (key, value) in values {
            let keys = key.split(separator: "/").map { ChildKey(String($0)) }
            entries.append(ResolvedWrite.UpdateEntry(path: Path(keys: keys), value: value.node))
        }
        _ = try await database.send(.PATCH, path, parameters: [("print", "silent")], body: JSONWriter.updateObject(entries))
    }

    /// Deletes the value here.
    public func removeValue() async throws {
        _ = try await database.send(.DELETE, path, parameters: [("print", "silent")])
    }

    private func write(_ method: HTTPMethod, _ node: Node) async throws {
        _ = try await database.send(method, path, parameters: [("print", "silent")], body: JSONWriter.bytes(node))
    }

    // MARK: - Reading and querying

    /// The current value, read once from the server.
    public func getData() async throws -> DataSnapshot { try await query.getData() }

    public func queryOrdered(byChild path: String) -> DatabaseQuery { query.queryOrdered(byChild: path) }
    public func queryOrderedByKey() -> DatabaseQuery { query.queryOrderedByKey() }
    public func queryOrderedByValue() -> DatabaseQuery { query.queryOrderedByValue() }
    public func queryOrderedByPriority() -> DatabaseQuery { query.queryOrderedByPriority() }
    public func queryLimited(toFirst count: Int) -> DatabaseQuery { query.queryLimited(toFirst: count) }
    public func queryLimited(toLast count: Int) -> DatabaseQuery { query.queryLimited(toLast: count) }
}
