import Yams

/// Firebase's functions manifest (`functions.yaml`, spec `v1alpha1`): the functions a codebase
/// defines and what triggers each, as the functions SDKs describe them at `/__/functions.yaml`.
public struct FunctionManifest: Sendable {
    /// One function of the codebase.
    public struct Endpoint: Sendable {
        /// What calls it.
        public enum Kind: Sendable {
            /// Events (a CloudEvents function); `retry` asks for failed events to be retried.
            case event(FunctionDefinition.Trigger, retry: Bool)
            /// Firebase's callable protocol over HTTPS.
            case callable
            /// Plain HTTPS requests.
            case https
            /// Runs on a schedule; a failed run is tried `retryCount` more times.
            case schedule(CronSchedule, retryCount: Int)
            /// Asked before accounts are made or sign in, and waited for.
            case blocking(BlockingTrigger)
        }

        /// Its ID in the manifest (the key of `endpoints`): the name clients call it by.
        public var name: String
        /// The function in the code (`entryPoint`).
        public var entryPoint: String
        public var kind: Kind
        /// Its region (the first of `region`; `us-central1` when none is given).
        public var region: String
        /// How long one call may take (`timeoutSeconds`; Cloud Functions' 60 s when none).
        public var timeoutSeconds: Int

        /// How functions-framework must serve it: `cloudevent` for events, `http` otherwise.
        public var signatureType: String {
            if case .event = kind { return "cloudevent" }
            return "http"
        }
    }

    public var endpoints: [Endpoint]

    /// Reads a manifest.
    /// - Throws: ``FunctionError`` for text that is not a manifest, a spec version other than
    ///   `v1alpha1`, or a function whose trigger is unknown, malformed or not run by Hearth.
    public init(yaml text: String) throws {
        let document: Any?
        do {
            document = try Yams.load(yaml: text)
        } catch {
            throw FunctionError.unloadable("the functions manifest is not YAML: \(error)")
        }
        guard let root = document as? [String: Any] else { throw FunctionError.unloadable("the functions manifest is not a YAML mapping") }
        if let version = root["specVersion"] as? String, version != "v1alpha1" {
            throw FunctionError.unloadable("the functions manifest's specVersion \(version) is not v1alpha1")
        }
        guard let endpoints = (root["endpoints"] ?? [String: Any]()) as? [String: Any] else {
            throw FunctionError.unloadable("the functions manifest's endpoints is not a mapping")
        }
        self.endpoints = try endpoints.keys.sorted().map { name in
            guard let entry = endpoints[name] as? [String: Any] else {
                throw FunctionError.invalidDefinition(function: name, "its manifest entry is not a mapping")
            }
            return try Self.endpoint(name: name, entry)
        }
    }

    static func endpoint(name: String, _ entry: [String: Any]) throws -> Endpoint {
        guard FunctionDefinition.isValidName(name) else {
            throw FunctionError.invalidDefinition(function: name, "a name is 1-63 letters, digits, - and _, starting with a letter")
        }
        let entryPoint = entry["entryPoint"] as? String ?? name
        let region = (entry["region"] as? [Any])?.first as? String ?? "us-central1"
        let timeout = (entry["timeoutSeconds"] as? Int) ?? 60
        guard (1...3600).contains(timeout) else {
            throw FunctionError.invalidDefinition(function: name, "timeoutSeconds must be 1 to 3600")
        }
        let kind: Endpoint.Kind
        if entry["callableTrigger"] is [String: Any] {
            kind = .callable
        } else if entry["httpsTrigger"] is [String: Any] {
            kind = .https
        } else if entry["eventTrigger"] is [String: Any] {
            kind = .event(try EndpointTrigger.parse(entry, function: name), retry: EndpointTrigger.retries(entry))
        } else if let schedule = entry["scheduleTrigger"] as? [String: Any] {
            guard let expression = schedule["schedule"] as? String else {
                throw FunctionError.invalidDefinition(function: name, "scheduleTrigger has no schedule")
            }
            let retries = ((schedule["retryConfig"] as? [String: Any])?["retryCount"] as? Int) ?? 0
            guard (0...5).contains(retries) else {
                throw FunctionError.invalidDefinition(function: name, "retryConfig.retryCount must be 0 to 5")
            }
            kind = .schedule(
                try CronSchedule(expression, timeZone: schedule["timeZone"] as? String, function: name), retryCount: retries)
        } else if let blocking = entry["blockingTrigger"] as? [String: Any] {
            kind = .blocking(try BlockingTrigger.parse(blocking, function: name))
        } else if entry["taskQueueTrigger"] != nil {
            throw FunctionError.invalidDefinition(function: name, "Hearth does not run taskQueueTrigger functions yet")
        } else {
            throw FunctionError.invalidDefinition(function: name, "its manifest entry names no trigger Hearth knows")
        }
        return Endpoint(name: name, entryPoint: entryPoint, kind: kind, region: region, timeoutSeconds: timeout)
    }
}
