import HearthOutbox

/// Makes the structured CloudEvent a function gets from an event as its outbox keeps it.
///
/// Database events are kept without the attributes every event of this server shares
/// (``RecordedDatabaseEvent``), and get them here, at delivery; storage and account events,
/// and database events recorded by earlier versions, are kept as whole CloudEvents and pass
/// through unchanged.
public struct EventEnvelope: Sendable {
    let naming: DatabaseEventRecorder.Naming

    public init(naming: DatabaseEventRecorder.Naming) {
        self.naming = naming
    }

    /// The structured CloudEvent for `event`.
    /// - Throws: ``FunctionError/invalidEvent(_:)`` when its body cannot be read.
    public func structured(_ event: OutboxEvent) throws -> [UInt8] {
        guard RecordedDatabaseEvent.isRecorded(event.body) else { return event.body }
        let (recorded, data) = try RecordedDatabaseEvent.read(event.body)
        return recorded.cloudEvent(id: event.id, time: event.time, data: Array(data), naming: naming).structured()
    }

    /// `stored` with its body made the structured CloudEvent.
    func delivering(_ stored: StoredEvent) throws -> StoredEvent {
        var expanded = stored
        expanded.event.body = try structured(stored.event)
        return expanded
    }
}
