import AsyncHTTPClient
import Foundation
import HearthCore
@testable import HearthFunctions
import Testing

/// `webhooks.json` read into function definitions: a complete document's settings land in
/// the trigger, the policy and the signer, and every mistake is refused with an error naming
/// the function (or the file) and what is wrong.
struct WebhookConfigurationTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let otherSecret = "whsec_" + Data(repeating: 1, count: 32).base64EncodedString()
    static let thirdSecret = "whsec_" + Data(repeating: 2, count: 24).base64EncodedString()

    static func parse(_ json: String, environment: [String: String] = [:]) throws -> [FunctionDefinition] {
        try WebhookConfiguration.parse(
            Data(json.utf8), file: "webhooks.json", client: HTTPClient.shared, environment: environment, now: { 1_700_000_000_000 }
        ).functions
    }

    /// A valid webhook named `hook` with `changes` made to its definition (JSON members,
    /// replacing those of the same name; a `null` removes one).
    static func document(_ changes: String = "") -> String {
        var hook: [String: Any] = [
            "url": "https://example.com/hooks/posts",
            "secrets": [secret],
            "eventTrigger": [
                "eventType": "google.firebase.database.ref.v1.created", "eventFilterPathPatterns": ["ref": "posts/{postId}"],
            ] as [String: Any],
        ]
        if !changes.isEmpty {
            let extra = try! JSONSerialization.jsonObject(with: Data("{\(changes)}".utf8)) as! [String: Any]
            for (key, value) in extra { hook[key] = value is NSNull ? nil : value }
        }
        let data = try! JSONSerialization.data(withJSONObject: ["webhooks": ["hook": hook]], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aCompleteDocumentSetsTheTriggerPolicyURLAndSecrets() throws {
        let json = """
            {"webhooks": {
              "notifyFollowers": {
                "url": "https://example.com/hooks/posts",
                "secretEnv": "POSTS_HOOK_SECRETS",
                "eventTrigger": {"eventType": "google.firebase.database.ref.v1.written",
                                 "eventFilterPathPatterns": {"ref": "posts/{postId}", "instance": "my-project-*"}},
                "timeoutSeconds": 30, "maxConcurrency": 4,
                "retry": {"maxAttempts": 3, "minBackoffSeconds": 0.5, "maxBackoffSeconds": 10}
              },
              "audit": {
                "url": "http://127.0.0.1:8080/audit",
                "secrets": ["\(Self.secret)"],
                "eventTrigger": {"eventType": "google.firebase.database.ref.v1.deleted",
                                 "eventFilters": {"instance": "audit-db"},
                                 "eventFilterPathPatterns": {"ref": "logs/{id}/entries/*"}}
              }
            }}
            """
        let definitions = try Self.parse(json, environment: ["POSTS_HOOK_SECRETS": "\(Self.otherSecret) \(Self.thirdSecret),\(Self.secret)"])
        #expect(definitions.map(\.name) == ["audit", "notifyFollowers"])
        let notify = definitions[1]
        #expect(notify.trigger == .database(DatabaseTrigger(
            change: .written, ref: try PathPattern(parsing: "posts/{postId}"),
            instance: try InstancePattern(parsing: "my-project-*", function: "notifyFollowers"))))
        #expect(notify.policy == DeliveryPolicy(
            maxAttempts: 3, minBackoff: .milliseconds(500), maxBackoff: .seconds(10), timeout: .seconds(30), maxConcurrency: 4))
        let notifyInvoker = try #require(notify.invoker as? HTTPEventInvoker)
        #expect(notifyInvoker.url == "https://example.com/hooks/posts")
        #expect(notifyInvoker.signer?.keys.count == 3)

        let audit = definitions[0]
        guard case .database(let trigger) = audit.trigger else {
            Issue.record("not a database trigger: \(audit.trigger)")
            return
        }
        #expect(trigger.change == .deleted)
        #expect(trigger.instance.text == "audit-db")
        #expect(trigger.ref.description == "logs/{id}/entries/*")
        #expect(audit.policy == DeliveryPolicy())
        let auditInvoker = try #require(audit.invoker as? HTTPEventInvoker)
        #expect(auditInvoker.url == "http://127.0.0.1:8080/audit")
        #expect(auditInvoker.signer?.keys.count == 1)
    }

    @Test func withoutAnInstanceEveryDatabaseIsWatched() throws {
        let definitions = try Self.parse(Self.document())
        guard case .database(let trigger)? = definitions.first?.trigger else {
            Issue.record("no database trigger")
            return
        }
        #expect(trigger.instance.text == "*")
        #expect(trigger.watches(database: "anything"))
    }

    @Test func secretsInlineAndFromTheEnvironmentAddUp() throws {
        let definitions = try Self.parse(
            Self.document(#""secretEnv": "HOOK""#), environment: ["HOOK": "\(Self.otherSecret),,\(Self.thirdSecret)"])
        let invoker = try #require(definitions.first?.invoker as? HTTPEventInvoker)
        #expect(invoker.signer?.keys.count == 3)
    }

    @Test func aMaxBackoffBelowTheMinimumIsRaisedToIt() throws {
        let definitions = try Self.parse(Self.document(#""retry": {"minBackoffSeconds": 20, "maxBackoffSeconds": 5}"#))
        #expect(definitions.first?.policy.minBackoff == .seconds(20))
        #expect(definitions.first?.policy.maxBackoff == .seconds(20))
    }

    @Test func anEmptyDocumentHasNoWebhooks() throws {
        #expect(try Self.parse("{}").isEmpty)
        #expect(try Self.parse(#"{"webhooks": {}}"#).isEmpty)
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var name: String
        var json: String
        var environment: [String: String] = [:]
        /// What the error's description must contain.
        var expected: [String]
        var testDescription: String { name }
    }

    static let badCases: [BadCase] = [
        BadCase(name: "an unknown key", json: document(#""colour": "red""#), expected: ["function hook:", "unknown key colour"]),
        BadCase(name: "a url that is not http", json: document(#""url": "ftp://example.com/x""#),
                expected: ["function hook:", "url must be an http or https URL"]),
        BadCase(name: "a url without a host", json: document(#""url": "not a url""#),
                expected: ["function hook:", "url must be an http or https URL"]),
        BadCase(name: "no url", json: document(#""url": null"#), expected: ["function hook:", "url"]),
        BadCase(name: "a missing environment variable", json: document(#""secretEnv": "NOT_SET_ANYWHERE""#),
                expected: ["function hook:", "NOT_SET_ANYWHERE", "not set"]),
        BadCase(name: "an empty environment variable", json: document(#""secretEnv": "EMPTY""#), environment: ["EMPTY": ""],
                expected: ["function hook:", "EMPTY", "not set"]),
        BadCase(name: "no secret", json: document(#""secrets": null"#), expected: ["function hook:", "secret"]),
        BadCase(name: "a bad secret", json: document(#""secrets": ["whsec_c2hvcnQ="]"#), expected: ["function hook:", "secret"]),
        BadCase(name: "a timeout of zero", json: document(#""timeoutSeconds": 0"#),
                expected: ["function hook:", "timeoutSeconds must be a number"]),
        BadCase(name: "a timeout too long", json: document(#""timeoutSeconds": 3601"#),
                expected: ["function hook:", "timeoutSeconds must be a number"]),
        BadCase(name: "a timeout given as text", json: document(#""timeoutSeconds": "30""#),
                expected: ["function hook:", "timeoutSeconds must be a number"]),
        BadCase(name: "a timeout given as true", json: document(#""timeoutSeconds": true"#),
                expected: ["function hook:", "timeoutSeconds must be a number"]),
        BadCase(name: "a concurrency given as true", json: document(#""maxConcurrency": true"#),
                expected: ["function hook:", "maxConcurrency must be a number"]),
        BadCase(name: "a concurrency given as false", json: document(#""maxConcurrency": false"#),
                expected: ["function hook:", "maxConcurrency must be a number"]),
        BadCase(name: "a negative concurrency", json: document(#""maxConcurrency": -2"#),
                expected: ["function hook:", "maxConcurrency must be a number"]),
        BadCase(name: "retry not an object", json: document(#""retry": 3"#), expected: ["function hook:", "retry is not an object"]),
        BadCase(name: "no attempts", json: document(#""retry": {"maxAttempts": 0}"#),
                expected: ["function hook:", "retry.maxAttempts must be a number"]),
        BadCase(name: "attempts given as true", json: document(#""retry": {"maxAttempts": true}"#),
                expected: ["function hook:", "retry.maxAttempts must be a number"]),
        BadCase(name: "a negative backoff", json: document(#""retry": {"minBackoffSeconds": -1}"#),
                expected: ["function hook:", "retry.minBackoffSeconds must be a number"]),
        BadCase(name: "a backoff given as text", json: document(#""retry": {"maxBackoffSeconds": "60"}"#),
                expected: ["function hook:", "retry.maxBackoffSeconds must be a number"]),
        BadCase(name: "a bad ref pattern",
                json: document(#""eventTrigger": {"eventType": "google.firebase.database.ref.v1.written", "eventFilterPathPatterns": {"ref": "posts/{id"}}"#),
                expected: ["function hook:", "Invalid path pattern", "posts/{id"]),
        BadCase(name: "a ref matching several levels",
                json: document(#""eventTrigger": {"eventType": "google.firebase.database.ref.v1.written", "eventFilterPathPatterns": {"ref": "posts/**"}}"#),
                expected: ["function hook:", "**"]),
        BadCase(name: "no ref",
                json: document(#""eventTrigger": {"eventType": "google.firebase.database.ref.v1.written"}"#),
                expected: ["function hook:", "needs a ref"]),
        BadCase(name: "a bad instance",
                json: document(#""eventTrigger": {"eventType": "google.firebase.database.ref.v1.written", "eventFilterPathPatterns": {"ref": "a", "instance": "a/b"}}"#),
                expected: ["function hook:", "a/b"]),
        BadCase(name: "an unknown event type",
                json: document(#""eventTrigger": {"eventType": "google.cloud.pubsub.topic.v1.messagePublished"}"#),
                expected: ["function hook:", "unknown event type google.cloud.pubsub.topic.v1.messagePublished"]),
        BadCase(name: "an unknown database event type",
                json: document(#""eventTrigger": {"eventType": "google.firebase.database.ref.v1.renamed", "eventFilterPathPatterns": {"ref": "a"}}"#),
                expected: ["function hook:", "unknown", "renamed"]),
        BadCase(name: "no trigger", json: document(#""eventTrigger": null"#), expected: ["function hook:", "no trigger"]),
        BadCase(name: "a trigger without a type", json: document(#""eventTrigger": {}"#), expected: ["function hook:", "eventType"]),
        BadCase(name: "a webhook that is not an object", json: #"{"webhooks": {"hook": 3}}"#, expected: ["function hook:", "not an object"]),
        BadCase(name: "webhooks that are not an object", json: #"{"webhooks": ["hook"]}"#, expected: ["webhooks.json", "not an object"]),
        BadCase(name: "an unknown top-level key", json: #"{"webhooks": {}, "hooks": {}}"#, expected: ["webhooks.json", "unknown key hooks"]),
        BadCase(name: "a document that is not an object", json: #"["webhooks"]"#, expected: ["webhooks.json", "not a JSON object"]),
        BadCase(name: "a document that is not JSON", json: #"{"webhooks": "#, expected: ["webhooks.json", "not a JSON object"]),
    ]

    @Test(arguments: badCases)
    func aMistakeIsRefusedSayingWhereAndWhat(_ example: BadCase) {
        let error = #expect(throws: FunctionError.self) { try Self.parse(example.json, environment: example.environment) }
        let description = error?.description ?? ""
        for part in example.expected {
            #expect(description.contains(part), "\(description)")
        }
    }

    @Test func oneBadWebhookRefusesTheWholeFile() {
        let json = """
            {"webhooks": {"good": {"url": "https://example.com", "secrets": ["\(Self.secret)"],
                                   "eventTrigger": {"eventType": "google.firebase.database.ref.v1.written",
                                                    "eventFilterPathPatterns": {"ref": "a"}}},
                          "bad": {"url": "https://example.com"}}}
            """
        let error = #expect(throws: FunctionError.self) { try Self.parse(json) }
        #expect(error?.description.hasPrefix("function bad:") == true)
    }
}
