import HearthCore
import HearthOutbox

/// A function written in Swift and run in the server's process, for apps that embed Hearth as a
/// library: it gets the same events, in the same order and with the same retries, as a
/// function in any other runtime. A handler that throws fails the delivery (retried per the
/// function's ``DeliveryPolicy``); one that takes longer than the timeout is counted as failed
/// (and cancelled).
public struct SwiftFunctionInvoker: EventInvoker {
    let handler: @Sendable (CloudEvent) async throws -> Void

    public init(_ handler: @escaping @Sendable (CloudEvent) async throws -> Void) {
        self.handler = handler
    }

    public func deliver(_ event: StoredEvent, timeout: Duration) async -> DeliveryResult {
        let cloudEvent: CloudEvent
        do {
            cloudEvent = try CloudEvent(structured: event.event.body)
        } catch {
            return .failed("\(error)")
        }
        let handler = self.handler
        // Not a task group: a group waits for its children, and a handler that ignores
        // cancellation would hold the lane past its timeout.
        let outcome = await firstWithin(timeout) { () async -> DeliveryResult in
            do {
                try await handler(cloudEvent)
                return .delivered
            } catch {
                return Task.isCancelled ? .failed("cancelled") : .failed("\(error)")
            }
        }
        return outcome ?? .failed("no answer within \(timeout)")
    }
}

extension FunctionDefinition {
    /// A Swift function run when a database change matches `ref` in the databases `instance`
    /// names (Firebase's `onValueWritten`, `onValueCreated`, … by `change`).
    /// - Throws: ``FunctionError`` for a bad pattern.
    public static func onValue(
        _ change: DatabaseTrigger.Change, ref: String, instance: String = "*", name: String, policy: DeliveryPolicy = DeliveryPolicy(),
        _ handler: @escaping @Sendable (DatabaseChangeEvent) async throws -> Void
    ) throws -> FunctionDefinition {
        let trigger = try DatabaseTrigger(eventType: change.eventType, ref: ref, instance: instance, function: name)
        return FunctionDefinition(
            name: name, trigger: .database(trigger),
            invoker: SwiftFunctionInvoker { event in try await handler(DatabaseChangeEvent(event, pattern: trigger.ref)) },
            policy: policy)
    }
}
