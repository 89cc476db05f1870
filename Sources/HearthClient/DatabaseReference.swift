import Foundation
import HearthCore

/// A location in the database, as Firebase's `DatabaseReference`: navigate with ``child(_:)``,
/// ``parent`` and ``root``; write with ``setValue(_:)-(DatabaseValue)``,
/// ``updateChildValues(_:)`` and ``removeValue()``; read with ``getData()`` or listen with
/// ``observe(_:)-(DataEventType)``. Writes show locally at once and reach the server in order,
/// now or when the connection returns.
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
        let keys = Path.keys(splitting: path)
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
    ///
    /// The write shows in listeners at once, is saved on the device (with a cache file), and is
    /// sent when the connection is up; await ``DatabaseWrite/acknowledged()`` for the server's answer.
    @discardableResult
    public func setValue<T: Encodable>(_ value: T?) throws -> DatabaseWrite {
        let node = try value.map { try DatabaseValue.node(encoding: $0) } ?? .null
        return write(.set(node))
    }

    /// Replaces the value here.
    @discardableResult
    public func setValue(_ value: DatabaseValue) -> DatabaseWrite {
        write(.set(value.node))
    }

    /// Replaces the value here and gives it a priority (a number or string; nil clears it).
    @discardableResult
    public func setValue(_ value: DatabaseValue, andPriority priority: DatabaseValue?) -> DatabaseWrite {
        write(.set(value.node.withPriority(priority.flatMap { Self.priority($0.node) })))
    }

    /// Sets only the priority here.
    @discardableResult
    public func setPriority(_ priority: DatabaseValue?) -> DatabaseWrite {
        database.root.child(pathString.isEmpty ? ".priority" : pathString + "/.priority")
            .write(.set(priority?.node ?? .null))
    }

    /// Sets several locations below this one at once, atomically: keys are relative paths
    /// (`"posts/\(id)"`, `"user-posts/\(uid)/\(id)"`), `nil`/``DatabaseValue/null`` deletes.
    @discardableResult
    public func updateChildValues(_ values: [String: DatabaseValue]) -> DatabaseWrite {
        var entries: [(path: Path, value: Node)] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let keys = Path.keys(splitting: key)
            entries.append((Path(keys: keys), value.node))
        }
        guard !entries.isEmpty else { return DatabaseWrite(outcome: .success(())) }
        return write(.merge(entries))
    }

    /// Deletes the value here.
    @discardableResult
    public func removeValue() -> DatabaseWrite {
        write(.set(.null))
    }

    private func write(_ change: PendingWrite.Change) -> DatabaseWrite {
        let receipt = DatabaseWrite.Receipt()
        switch database.engine.write(path, change, completion: { receipt.finish($0) }) {
        case .success: return DatabaseWrite(receipt: receipt, database: database)
        case .failure(let error): return DatabaseWrite(outcome: .failure(error))
        }
    }

    private static func priority(_ node: Node) -> Priority? {
        switch node.unprioritized {
        case .int(let value): return .number(Double(value))
        case .double(let value): return .number(value)
        case .string(let value): return .string(value)
        default: return nil
        }
    }

    /// Keeps this location's data synced (and cached) even without listeners, as Firebase's
    /// `keepSynced(true)`; `false` ends it.
    public func keepSynced(_ keep: Bool) { query.keepSynced(keep) }

    /// Writes the server makes when this client's connection ends (presence, "last seen").
    public func onDisconnect() -> OnDisconnect { OnDisconnect(ref: self) }

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
