import AsyncHTTPClient
import Foundation

/// Webhooks declared in a JSON file (`webhooks.json` in the functions folder): each is a
/// function whose events are POSTed to a URL, signed with its secrets.
///
/// ```json
/// {"webhooks": {"notifyFollowers": {
///     "url": "https://example.com/hooks/posts",
///     "secretEnv": "POSTS_HOOK_SECRETS",
///     "eventTrigger": {"eventType": "google.firebase.database.ref.v1.created",
///                      "eventFilterPathPatterns": {"ref": "posts/{postId}"}},
///     "timeoutSeconds": 30, "maxConcurrency": 1,
///     "retry": {"maxAttempts": 8, "minBackoffSeconds": 1, "maxBackoffSeconds": 60}}}}
/// ```
///
/// Secrets are `whsec_` strings, given inline (`secrets`) or, better, in an environment
/// variable (`secretEnv`, several separated by spaces or commas): listing two lets an endpoint
/// rotate its secret.
///
/// A webhook with a `blockingTrigger` instead (`{"eventType":
/// "providers/cloud.auth/eventTypes/user.beforeCreate"}`) is a blocking function: asked before
/// accounts are made or sign in, with Firebase's request, signed the same way.
public enum WebhookConfiguration {
    /// What a webhooks document declares.
    public struct Webhooks: Sendable {
        /// The webhooks that get events.
        public var functions: [FunctionDefinition] = []
        /// The blocking webhooks.
        public var blocking: [BlockingFunction] = []
    }

    /// The webhooks the file at `url` declares.
    /// - Throws: ``FunctionError`` naming the file and what is wrong in it.
    public static func load(
        from url: URL, client: HTTPClient, environment: [String: String] = ProcessInfo.processInfo.environment,
        now: @escaping @Sendable () -> Int64
    ) throws -> Webhooks {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw FunctionError.unloadable("\(url.path) cannot be read: \(error.localizedDescription)") }
        return try parse(data, file: url.lastPathComponent, client: client, environment: environment, now: now)
    }

    /// Parses a webhooks document.
    public static func parse(
        _ data: Data, file: String, client: HTTPClient, environment: [String: String], now: @escaping @Sendable () -> Int64
    ) throws -> Webhooks {
        guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FunctionError.unloadable("\(file) is not a JSON object")
        }
        let unknown = Set(document.keys).subtracting(["webhooks"])
        guard unknown.isEmpty else { throw FunctionError.unloadable("\(file): unknown key \(unknown.sorted().joined(separator: ", "))") }
        guard let hooks = (document["webhooks"] ?? [String: Any]()) as? [String: Any] else {
            throw FunctionError.unloadable("\(file): webhooks is not an object of webhooks by name")
        }
        var webhooks = Webhooks()
        for name in hooks.keys.sorted() {
            guard let hook = hooks[name] as? [String: Any] else { throw FunctionError.invalidDefinition(function: name, "not an object") }
            if let trigger = hook["blockingTrigger"] {
                webhooks.blocking.append(try blockingFunction(name: name, hook, trigger: trigger, environment: environment))
            } else {
                webhooks.functions.append(try definition(name: name, hook, client: client, environment: environment, now: now))
            }
        }
        return webhooks
    }

    static func blockingFunction(name: String, _ hook: [String: Any], trigger: Any, environment: [String: String]) throws -> BlockingFunction {
        let unknown = Set(hook.keys).subtracting(["url", "secrets", "secretEnv", "blockingTrigger"])
        guard unknown.isEmpty else {
            throw FunctionError.invalidDefinition(function: name, "unknown key for a blocking webhook \(unknown.sorted().joined(separator: ", "))")
        }
        guard let trigger = trigger as? [String: Any] else { throw FunctionError.invalidDefinition(function: name, "blockingTrigger is not an object") }
        let (url, signer) = try endpoint(name: name, hook, environment: environment)
        return BlockingFunction(name: name, trigger: try BlockingTrigger.parse(trigger, function: name), runtime: .http(url: url, signer: signer))
    }

    /// The URL and the signer of a webhook.
    static func endpoint(name: String, _ hook: [String: Any], environment: [String: String]) throws -> (String, WebhookSigner) {
        guard let target = hook["url"] as? String, let parsed = URL(string: target), ["http", "https"].contains(parsed.scheme ?? ""),
            parsed.host != nil
        else { throw FunctionError.invalidDefinition(function: name, "url must be an http or https URL") }
        var secrets = hook["secrets"] as? [String] ?? []
        if let variable = hook["secretEnv"] as? String {
            guard let value = environment[variable], !value.isEmpty else {
                throw FunctionError.invalidDefinition(function: name, "the environment variable \(variable) (secretEnv) is not set")
            }
            secrets += value.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        }
        return (target, try WebhookSigner(secrets: secrets, function: name))
    }

    static func definition(
        name: String, _ hook: [String: Any], client: HTTPClient, environment: [String: String], now: @escaping @Sendable () -> Int64
    ) throws -> FunctionDefinition {
        let known: Set<String> = ["url", "secrets", "secretEnv", "eventTrigger", "timeoutSeconds", "maxConcurrency", "retry"]
        let unknown = Set(hook.keys).subtracting(known)
        guard unknown.isEmpty else { throw FunctionError.invalidDefinition(function: name, "unknown key \(unknown.sorted().joined(separator: ", "))") }
        let (target, signer) = try endpoint(name: name, hook, environment: environment)
        let trigger = try EndpointTrigger.parse(hook, function: name)
        var policy = DeliveryPolicy()
        if let seconds = try number(hook["timeoutSeconds"], "timeoutSeconds", function: name, in: 1...3600) {
            policy.timeout = .seconds(seconds)
        }
        if let concurrency = try number(hook["maxConcurrency"], "maxConcurrency", function: name, in: 1...1000) {
            policy.maxConcurrency = Int(concurrency)
        }
        if let retry = hook["retry"] {
            guard let retry = retry as? [String: Any] else { throw FunctionError.invalidDefinition(function: name, "retry is not an object") }
            if let attempts = try number(retry["maxAttempts"], "retry.maxAttempts", function: name, in: 1...1000) {
                policy.maxAttempts = Int(attempts)
            }
            if let seconds = try number(retry["minBackoffSeconds"], "retry.minBackoffSeconds", function: name, in: 0...3600) {
                policy.minBackoff = .milliseconds(Int64(seconds * 1000))
            }
            if let seconds = try number(retry["maxBackoffSeconds"], "retry.maxBackoffSeconds", function: name, in: 0...86400) {
                policy.maxBackoff = .milliseconds(Int64(seconds * 1000))
            }
            policy.maxBackoff = max(policy.minBackoff, policy.maxBackoff)
        }
        return FunctionDefinition(
            name: name, trigger: trigger, invoker: HTTPEventInvoker(url: target, signer: signer, client: client, now: now), policy: policy)
    }

    private static func number(_ value: Any?, _ key: String, function: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let value else { return nil }
        // JSONSerialization gives booleans as numbers too, of their own class.
        guard let number = value as? NSNumber, !"\(type(of: value))".contains("Boolean"), range.contains(number.doubleValue) else {
            throw FunctionError.invalidDefinition(
                function: function, "\(key) must be a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted())")
        }
        return number.doubleValue
    }
}
