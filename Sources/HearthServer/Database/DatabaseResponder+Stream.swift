import HearthCore
import HearthRules
import HearthStore
import HTTPTypes
import HearthEngine
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

extension DatabaseResponder {
    /// True when the request asks for a Server-Sent Events stream.
    static func wantsStream(_ request: Request) -> Bool {
        request.method == .get && (request.headers.value(of: .accept)?.contains("text/event-stream") ?? false)
    }

    /// `GET` with `Accept: text/event-stream`: the initial `put` at `/`, then an event for every
    /// write that touches the location (or changes the query's result), `keep-alive` events,
    /// and `cancel` when access ends. The delivery loop runs on the connection's event loop, and
    /// ends as soon as the client closes the connection (not at the next write).
    func stream(_ rest: RESTRequest, database: Database, auth: RequestAuth, connection: any Channel) throws -> Response {
        let query = try QueryParameters.parse(rest.parameters)
        let hub = self.hub
        let metrics = operations.metrics
        let delivery = DatabaseOperations.ListenDelivery(
            format: .serverSentEvents, buffer: EventBuffer(onOverflow: { metrics.streamDropped(transport: "sse") }))
        let (listener, initial) = try operations.listen(
            database, at: rest.path, query: query, auth: auth, missingIndex: .refuse, delivery: delivery)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[HTTPField.Name("Cache-Control")!] = "no-cache"
        let executor = EventLoopTaskExecutor(connection.eventLoop)
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let clientGone = ClientGoneHandler { listener.buffer.close() }
            connection.pipeline.addHandler(clientGone, position: .first).whenFailure { _ in listener.buffer.close() }
            defer {
                hub.unsubscribe(listener)
                connection.pipeline.removeHandler(clientGone).whenFailure { _ in }
            }
            // The server's graceful shutdown waits for its connections, so each stream ends itself.
            try await withGracefulShutdownHandler {
                try await withTaskExecutorPreference(executor) {
                    try await Self.deliver(to: &writer, listener: listener, initial: initial, database: database, hub: hub)
                }
            } onGracefulShutdown: {
                listener.buffer.close()
            }
        })
    }

    /// Writes the initial value, then the listener's events as they come, until it is closed.
    /// Kept apart from the response so a waiting stream holds only this small frame.
    private static func deliver(
        to writer: inout any ResponseBodyWriter, listener: Listener, initial: Node, database: Database, hub: ListenerHub
    ) async throws {
        guard initial.estimatedSize <= hub.maxEventBytes else {
            try await writer.write(SSEEncoding.payloadTooLarge)
            return try await writer.finish(nil)
        }
        try await writer.write(SSEEncoding.encode(.put(path: .root, data: initial)))
        var delivered = listener.startSequence
        streaming: while true {
            switch await listener.buffer.next() {
            case .events(let events):
                // After a resync, events already covered by it are skipped.
                if events.count == 1, events[0].sequence > delivered {
                    delivered = events[0].sequence
                    try await writer.write(events[0].bytes)
                    continue streaming
                }
                let fresh = events.filter { $0.sequence > delivered }.map(\.bytes)
                if let last = events.last { delivered = max(delivered, last.sequence) }
                if !fresh.isEmpty { try await writer.write(contentsOf: fresh) }
            case .resync:
                guard let sequence = try await resync(&writer, listener: listener, database: database, hub: hub) else {
                    break streaming
                }
                delivered = sequence
            case .keepAlive:
                try await writer.write(SSEEncoding.keepAlive)
            case .closed(let final):
                if !final.isEmpty { try await writer.write(contentsOf: final) }
                break streaming
            }
        }
        try await writer.finish(nil)
    }

    /// Sends a listener that fell behind the current value as one `put`; returns the sequence
    /// it covers, or nil when the value is too large (the stream is then cancelled).
    private static func resync(
        _ writer: inout any ResponseBodyWriter, listener: Listener, database: Database, hub: ListenerHub
    ) async throws -> Int64? {
        let version = database.current
        let value = ListenerHub.value(at: listener.path, query: listener.query, in: version.state)
        guard value.estimatedSize <= hub.maxEventBytes else {
            try await writer.write(SSEEncoding.payloadTooLarge)
            return nil
        }
        listener.lastResult.withLock { $0 = value }
        try await writer.write(SSEEncoding.encode(.put(path: .root, data: value)))
        return version.sequence
    }
}
