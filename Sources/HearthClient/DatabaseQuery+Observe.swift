import Foundation
import HearthCore

/// A listener registration, to remove with ``DatabaseQuery/removeObserver(withHandle:)``.
public struct DatabaseHandle: Sendable, Hashable {
    let id: Int
}

extension DatabaseQuery {
    /// Events of one type, as an `AsyncSequence`: `for try await event in ref.observe(.childAdded)`.
    /// Ending the loop ends the subscription.
    public func observe(_ type: DataEventType) -> AsyncThrowingStream<DataEvent, any Error> {
        observe([type])
    }

    /// Events of the given types, in Firebase's order for each change: children removed, added,
    /// moved and changed (in the query's order), then the value.
    ///
    /// The first events come at once from what the device holds (its cache included), so a
    /// screen fills offline; the server's data follows as changes. A write made here shows at
    /// once. The stream ends with an error when the rules stop allowing the read
    /// (``HearthClientError/Kind-swift.enum/permissionDenied``). At most `bufferLimit` events
    /// wait for a slow consumer; older ones are dropped beyond that.
    public func observe(_ types: Set<DataEventType>, bufferLimit: Int = 10_000) -> AsyncThrowingStream<DataEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DataEvent, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(bufferLimit))
        let handle = observe(types, with: { continuation.yield($0) }, withCancel: { continuation.finish(throwing: $0) })
        let database = database
        continuation.onTermination = { _ in database.engine.removeListener(handle.id) }
        return stream
    }

    /// Calls `handler` for every event of the given types (on the database's callback queue, in
    /// order) until ``removeObserver(withHandle:)``; `cancel` if the rules end the listen.
    @discardableResult
    public func observe(
        _ types: Set<DataEventType>, with handler: @escaping @Sendable (DataEvent) -> Void,
        withCancel cancel: (@Sendable (HearthClientError) -> Void)? = nil
    ) -> DatabaseHandle {
        let database = database
        let id = database.engine.addListener(
            path: path, query: spec, types: types,
            handler: { event in handler(DataEvent(event, in: database)) }, cancel: cancel)
        return DatabaseHandle(id: id)
    }

    /// Ends one listener.
    public func removeObserver(withHandle handle: DatabaseHandle) {
        database.engine.removeListener(handle.id)
    }

    /// Keeps this query's data synced (and cached) without listeners; `false` ends it.
    public func keepSynced(_ keep: Bool) {
        database.engine.keepSynced(path: path, query: spec, keep)
    }

    /// The current value: from the device when it holds it complete and listened, else from
    /// the server, else (offline) from the cache.
    public func getData() async throws -> DataSnapshot {
        let node = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Node, any Error>) in
            database.engine.get(path: path, query: spec) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
        return DataSnapshot(ref: ref, node: node, order: order)
    }
}

extension DatabaseReference {
    public func observe(_ type: DataEventType) -> AsyncThrowingStream<DataEvent, any Error> { query.observe(type) }

    public func observe(_ types: Set<DataEventType>) -> AsyncThrowingStream<DataEvent, any Error> { query.observe(types) }

    @discardableResult
    public func observe(
        _ types: Set<DataEventType>, with handler: @escaping @Sendable (DataEvent) -> Void,
        withCancel cancel: (@Sendable (HearthClientError) -> Void)? = nil
    ) -> DatabaseHandle {
        query.observe(types, with: handler, withCancel: cancel)
    }

    public func removeObserver(withHandle handle: DatabaseHandle) { query.removeObserver(withHandle: handle) }
}

extension DataEvent {
    init(_ event: ViewEvent, in database: Database) {
        let ref = DatabaseReference(database: database, path: event.path)
        let order = event.type == .value ? event.order : Query(order: .priority)
        self.init(type: event.type, snapshot: DataSnapshot(ref: ref, node: event.node, order: order), previousSiblingKey: event.previousKey)
    }
}
