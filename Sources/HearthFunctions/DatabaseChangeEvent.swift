import Foundation
import HearthCore

/// A database trigger's event as a Swift function receives it: the CloudEvent read back into
/// the values before and after, the matched location and its parameters, and who wrote.
public struct DatabaseChangeEvent: Sendable {
    /// The event's stable ID (the same at every delivery).
    public var id: String
    /// When the write was committed, in milliseconds since the epoch.
    public var time: Int64
    /// `written`, `created`, `updated` or `deleted`.
    public var change: DatabaseTrigger.Change
    /// The database.
    public var instance: String
    /// The matched location.
    public var path: Path
    /// What the trigger's captures matched there.
    public var parameters: [String: String]
    public var before: Node
    public var after: Node
    /// `admin`, `app_user`, `unauthenticated` or `unknown`.
    public var authType: String
    /// The user's ID, for `app_user`.
    public var authID: String?

    /// Reads a database CloudEvent, matching its `ref` against `pattern` for the parameters.
    public init(_ event: CloudEvent, pattern: PathPattern) throws {
        guard let change = DatabaseTrigger.Change(eventType: event.type), let ref = event.extensions["ref"],
            let instance = event.extensions["instance"]
        else { throw FunctionError.invalidEvent("not a database event: \(event.type)") }
        guard let data = try JSONSerialization.jsonObject(with: Data(event.data), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw FunctionError.invalidEvent("a database event's data is not an object")
        }
        let before = data["data"] ?? NSNull()
        let after = Self.merging(data["delta"] ?? NSNull(), into: before)
        id = event.id
        time = event.time
        self.change = change
        self.instance = instance
        do {
            path = try Path(parsing: ref)
        } catch {
            throw FunctionError.invalidEvent("a database event's ref \(ref) is not a path")
        }
        parameters = pattern.match(path) ?? [:]
        self.before = try Self.node(before)
        self.after = try Self.node(after)
        authType = event.extensions["authtype"] ?? "unknown"
        authID = event.extensions["authid"]
    }

    /// `delta` applied to `base` as Firebase's SDKs apply it: objects merge key by key, a null
    /// removes a key, anything else replaces.
    static func merging(_ delta: Any, into base: Any) -> Any {
        guard let changes = delta as? [String: Any], var merged = base as? [String: Any] else { return delta }
        for (key, value) in changes {
            if value is NSNull {
                merged[key] = nil
            } else {
                merged[key] = merging(value, into: merged[key] ?? NSNull())
            }
        }
        return merged
    }

    static func node(_ value: Any) throws -> Node {
        if value is NSNull { return .null }
        let bytes = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
        return try JSONParser.parse(Array(bytes)).node
    }
}
