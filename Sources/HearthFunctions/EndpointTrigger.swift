/// Reads a trigger from a function's entry in Firebase's functions manifest (the
/// `functions.yaml` the functions SDKs serve, parsed into dictionaries), or from a webhook's
/// definition, which uses the same shape:
///
/// ```yaml
/// eventTrigger:
///   eventType: google.firebase.database.ref.v1.written
///   eventFilters: {instance: "*"}
///   eventFilterPathPatterns: {ref: "posts/{postId}"}
///   retry: false
/// ```
enum EndpointTrigger {
    /// The trigger of the entry `endpoint` of the function `function`.
    /// - Throws: ``FunctionError`` naming what is missing or unknown.
    static func parse(_ endpoint: [String: Any], function: String) throws -> FunctionDefinition.Trigger {
        guard let event = endpoint["eventTrigger"] as? [String: Any] else {
            let kinds = endpoint.keys.filter { $0.hasSuffix("Trigger") }.sorted()
            throw FunctionError.invalidDefinition(
                function: function,
                kinds.isEmpty ? "no trigger (eventTrigger)" : "\(kinds.joined(separator: ", ")) is not a trigger Hearth delivers here")
        }
        guard let eventType = event["eventType"] as? String else {
            throw FunctionError.invalidDefinition(function: function, "eventTrigger has no eventType")
        }
        let filters = event["eventFilters"] as? [String: Any] ?? [:]
        let patterns = event["eventFilterPathPatterns"] as? [String: Any] ?? [:]
        if DatabaseTrigger.Change(eventType: eventType) != nil {
            guard let ref = (patterns["ref"] ?? filters["ref"]) as? String else {
                throw FunctionError.invalidDefinition(function: function, "a database trigger needs a ref (eventFilterPathPatterns.ref)")
            }
            let instance = (patterns["instance"] ?? filters["instance"]) as? String
            return .database(try DatabaseTrigger(eventType: eventType, ref: ref, instance: instance, function: function))
        }
        if let change = StorageTrigger.Change(eventType: eventType) {
            guard let bucket = filters["bucket"] as? String, !bucket.isEmpty else {
                throw FunctionError.invalidDefinition(function: function, "a storage trigger needs a bucket (eventFilters.bucket)")
            }
            return .storage(StorageTrigger(change: change, bucket: bucket))
        }
        if let change = AccountTrigger.Change(eventType: eventType) {
            return .account(AccountTrigger(change: change))
        }
        throw FunctionError.invalidDefinition(function: function, "unknown event type \(eventType)")
    }

    /// Whether the entry asks for failed events to be retried (`eventTrigger.retry`).
    static func retries(_ endpoint: [String: Any]) -> Bool {
        ((endpoint["eventTrigger"] as? [String: Any])?["retry"] as? Bool) ?? false
    }
}
