import HearthCore

/// A Realtime Database trigger: which changes, where, in which databases.
public struct DatabaseTrigger: Sendable, Hashable {
    /// Which changes fire it, as Firebase's event types name them.
    public enum Change: String, Sendable, CaseIterable {
        /// Any change: created, updated or deleted.
        case written
        /// A value appeared where there was none.
        case created
        /// A value changed into another.
        case updated
        /// A value went away.
        case deleted

        /// The CloudEvent type Firebase gives it.
        public var eventType: String { "google.firebase.database.ref.v1.\(rawValue)" }

        /// The change whose event type this is, or nil.
        public init?(eventType: String) {
            let prefix = "google.firebase.database.ref.v1."
            guard eventType.hasPrefix(prefix) else { return nil }
            self.init(rawValue: String(eventType.dropFirst(prefix.count)))
        }

        /// True when a location going from `before` to `after` (which differ) is this change.
        func includes(before: Node, after: Node) -> Bool {
            switch self {
            case .written: true
            case .created: before.isNull
            case .updated: !before.isNull && !after.isNull
            case .deleted: after.isNull
            }
        }
    }

    public var change: Change
    /// The locations it watches.
    public var ref: PathPattern
    /// The databases it watches.
    public var instance: InstancePattern

    public init(change: Change, ref: PathPattern, instance: InstancePattern) {
        self.change = change
        self.ref = ref
        self.instance = instance
    }

    /// Parses Firebase's spellings: the event type, the `ref` path pattern and the `instance`
    /// (default `*`).
    public init(eventType: String, ref: String, instance: String?, function: String) throws {
        guard let change = Change(eventType: eventType) else {
            throw FunctionError.invalidDefinition(function: function, "unknown database event type \(eventType)")
        }
        let instancePattern = try InstancePattern(parsing: instance ?? "*", function: function)
        let refPattern: PathPattern
        do {
            refPattern = try PathPattern(parsing: ref)
        } catch {
            throw FunctionError.invalidDefinition(function: function, error.message)
        }
        self.init(change: change, ref: refPattern, instance: instancePattern)
    }

    /// True when it watches the database `name`.
    public func watches(database name: String) -> Bool {
        instance.matches(name)
    }
}
