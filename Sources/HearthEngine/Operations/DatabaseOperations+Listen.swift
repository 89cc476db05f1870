import HearthCore
import HearthRules
import HearthStore
import NIOCore

extension DatabaseOperations {
    /// What a listen does when its query orders by a child the rules declare no index for.
    public enum MissingIndex: Sendable {
        /// Refuse it with `Index not defined…` (REST and Server-Sent Events).
        case refuse
        /// Serve it and say so (the realtime protocol's `no_index` warning).
        case warn
    }

    /// How a new listen's events are written and where they go.
    public struct ListenDelivery: Sendable {
        /// How the listen's events are encoded.
        public var format: ListenerFormat = .serverSentEvents
        /// The queue the listen's events go to: a stream's own, or a realtime connection's.
        public var buffer = EventBuffer()

        /// Server-Sent Events into a fresh buffer unless told otherwise.
        public init(format: ListenerFormat = .serverSentEvents, buffer: EventBuffer = EventBuffer()) {
            self.format = format
            self.buffer = buffer
        }
    }

    /// Starts listening at `path` (to `query`'s view there) as the rules let `auth` read it.
    /// `deliverInitial` gets the initial value, and whether the query lacks a declared index,
    /// before any event of the listen can be queued. The caller ends the listen with
    /// ``ListenerHub/unsubscribe(_:)``.
    /// - Throws: `Permission denied`, or `Index not defined…` with ``MissingIndex/refuse``.
    public func listen(
        _ database: Database, at path: Path, query: Query?, auth: RequestAuth, missingIndex: MissingIndex,
        delivery: ListenDelivery = ListenDelivery(), deliverInitial: (Node, _ unindexed: Bool) -> Void = { _, _ in }
    ) throws -> (Listener, Node) {
        let rules = try self.rules.rules(for: database)
        // For a query, the rules answer before anything about indexes (the subscription judges
        // again, on the version its initial value comes from); a plain listen is judged once.
        if query != nil {
            try checkRead(
                at: path, query: query, auth: auth, rules: rules, state: database.current.state, database: database, access: "listen")
        }
        var unindexed = false
        if let query, !rules.document.declaresIndex(at: path, for: query.order) {
            guard missingIndex == .warn else { throw Self.indexNotDefined(query.order, at: path) }
            unindexed = true
        }
        if let query, query.usesIndex, database.current.state.index(at: path, order: query.order) == nil {
            database.ensureIndex(at: path, order: query.order)
        }
        let ruleAuth = auth.ruleAuth
        let subscribed: Result<(Listener, Node), HearthError>
        do {
            subscribed = .success(try hub.subscribe(
                to: database, at: path, query: query, expires: auth.expires, auth: ruleAuth, rules: ruleAuth == nil ? nil : rules,
                format: delivery.format, buffer: delivery.buffer,
                deliverInitial: { deliverInitial($0, unindexed) }))
        } catch {
            subscribed = .failure(error)
        }
        if case .failure(let error) = subscribed, error.code == .permissionDenied {
            metrics.denied(database: database.name, access: "listen")
        }
        return try subscribed.get()
    }
}
