import AsyncHTTPClient
import Foundation
import HearthFunctions
import HearthServer
import HearthSocialServer
import HearthTesting
import Logging
import Testing

/// The social app's notifications reach a closed app: the server's functions push what
/// happened to each browser a person allowed, through a real (local) RFC 8030 push service
/// that decrypts what it gets, and honour the person's choices and the push service's answers.
@Suite(.timeLimit(.minutes(10)))
struct PushFunctionsTests {
    static let rules = try! String(
        contentsOf: PushService.repository.appendingPathComponent("Sources/HearthSocial/Resources/rules/database.rules.json"), encoding: .utf8)
    static let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]

    /// A server with the app's rules and its server side, pushing with `key` through `client`.
    static func withServer(key: VAPIDKey, client: HTTPClient, _ body: (TestServer) async throws -> Void) async throws {
        let backend = SocialBackend()
        var logger = Logger(label: "push-functions-test")
        logger.logLevel = .critical
        let sender = try WebPushSender(client: client, key: key, subject: "mailto:ops@example.com", now: { Date() })
        let social = SocialFunctions(
            backend: backend, moderation: { TextModeration(maskedWords: [String]()) }, now: { Int64(Date().timeIntervalSince1970 * 1000) },
            push: .init(sender: sender, publicKey: key.publicKeyBase64URL, allowsLoopbackHTTP: true), logger: logger)
        let functions = try FunctionsService(
            functions: try social.definitions, naming: .init(databaseHost: "127.0.0.1"), backlog: EventBacklog(limit: 1000),
            environment: DeliveryLane.Environment(now: { Int64(Date().timeIntervalSince1970 * 1000) }, sleep: { _ in }, logger: logger))
        try await TestServer.with(
            functions: functions,
            onServices: { services in
                backend.connect(SocialBackend.Parts(
                    data: DatabaseSocialData(provider: services.databases, name: services.defaultDatabase),
                    files: FileStoreSocialFiles(store: services.files), accounts: AuthServiceSocialAccounts(service: services.accounts)))
            },
            configure: { $0.defaultRules = rules }
        ) { server in
            try await social.started()
            try await body(server)
        }
    }

    static func put(_ server: TestServer, _ path: String, _ json: String) async throws {
        let result = try await server.request("PUT", "/\(path).json", body: json, headers: admin)
        #expect(result.status == 200, "\(path): \(String(decoding: result.body, as: UTF8.self))")
    }

    static func get(_ server: TestServer, _ path: String) async throws -> String {
        String(decoding: try await server.request("GET", "/\(path).json", headers: admin).body, as: UTF8.self)
    }

    /// Stores `subscription` as the app does, under its ID.
    static func store(_ subscription: WebPushSubscription, for uid: String, on server: TestServer, created: Int = 1) async throws {
        let keys = #"{"p256dh": "\#(WebPushSenderTests.base64URL(subscription.p256dh))", "auth": "\#(WebPushSenderTests.base64URL(subscription.auth))"}"#
        try await put(
            server, "pushSubscriptions/\(uid)/\(subscription.id)",
            #"{"endpoint": "\#(subscription.endpoint.absoluteString)", "keys": \#(keys), "created": \#(created)}"#)
    }

    /// Waits until the push service holds `count` messages for `id`.
    static func messages(_ service: PushService, _ client: HTTPClient, id: String, count: Int) async throws -> [PushService.Message] {
        let deadline = Date().addingTimeInterval(30)
        var messages = try await service.messages(client, id: id)
        while messages.count < count, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            messages = try await service.messages(client, id: id)
        }
        return messages
    }

    /// A message's payload (base64url, as the service reports it) read as the JSON the service worker reads.
    static func json(_ payload: String) throws -> [String: String] {
        try #require(JSONSerialization.jsonObject(with: Data(WebPushSenderTests.bytes(payload))) as? [String: String])
    }

    @Test func notificationsAndMessagesArePushedToEveryBrowserThePersonAllowed() async throws {
        let key = VAPIDKey()
        try await WebPushSenderTests.withPushService { service, client in
            try await Self.withServer(key: key, client: client) { server in
                // The key browsers subscribe with is published.
                #expect(try await Self.get(server, "pushConfig/vapidPublicKey") == "\"\(key.publicKeyBase64URL)\"")
                let (laptop, laptopID) = try await service.subscribe(client, applicationServerKey: key)
                let (phone, phoneID) = try await service.subscribe(client, applicationServerKey: key)
                for subscription in [laptop, phone] { try await Self.store(subscription, for: "ann", on: server) }
                try await Self.put(server, "posts/p1", #"{"title": "Harbour", "author": {"uid": "ann"}}"#)

                try await Self.put(server, "notifications/ann/like_p1_bob",
                    #"{"type": "like", "from": "bob", "name": "Bob Martin", "post": "p1", "timestamp": 1, "read": false}"#)
                for id in [laptopID, phoneID] {
                    let messages = try await Self.messages(service, client, id: id, count: 1)
                    #expect(messages.count == 1)
                    let payload = try Self.json(try #require(messages.first).payload)
                    #expect(payload["kind"] == "like" && payload["url"] == "#/post/p1" && payload["tag"] == "like_p1_bob")
                    #expect(payload["body"] == "Bob Martin liked your post “Harbour”" && payload["title"] == "Bob Martin")
                    #expect(messages.first?.urgency == "normal")
                }

                // A direct message goes to the other member, urgently.
                try await Self.put(server, "people/bob/full_name", #""Bob Martin""#)
                try await Self.put(server, "messages/ann_bob/m1", #"{"from": "bob", "text": "Coffee?", "timestamp": 2}"#)
                let chat = try await Self.messages(service, client, id: laptopID, count: 2)
                let payload = try Self.json(try #require(chat.last).payload)
                #expect(payload["kind"] == "message" && payload["body"] == "Coffee?" && payload["url"] == "#/chat/ann_bob")
                #expect(chat.last?.urgency == "high")

                // Ann turned follows off: none is pushed, while the next like is.
                try await Self.put(server, "notificationSettings/ann/follow", "false")
                try await Self.put(server, "notifications/ann/follow_carol",
                    #"{"type": "follow", "from": "carol", "name": "Carol Diaz", "timestamp": 3, "read": false}"#)
                try await Self.put(server, "notifications/ann/like_p1_carol",
                    #"{"type": "like", "from": "carol", "name": "Carol Diaz", "post": "p1", "timestamp": 4, "read": false}"#)
                let later = try await Self.messages(service, client, id: laptopID, count: 3)
                #expect(try later.map { try Self.json($0.payload)["kind"] } == ["like", "message", "like"])

                // The phone unsubscribed: the push service says it is gone, and it is removed.
                try await service.unsubscribe(client, id: phoneID)
                try await Self.put(server, "notifications/ann/comment_c1",
                    #"{"type": "comment", "from": "bob", "name": "Bob Martin", "post": "p1", "comment": "c1", "timestamp": 5, "read": false}"#)
                _ = try await Self.messages(service, client, id: laptopID, count: 4)
                let deadline = Date().addingTimeInterval(30)
                while try await Self.get(server, "pushSubscriptions/ann/\(phone.id)") != "null", Date() < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try await Self.get(server, "pushSubscriptions/ann/\(phone.id)") == "null")
                #expect(try await Self.get(server, "pushSubscriptions/ann/\(laptop.id)") != "null")
            }
        }
    }

    @Test func aSubscriptionThatIsNotOneIsRefusedOrRemoved() async throws {
        let key = VAPIDKey()
        try await WebPushSenderTests.withPushService { service, client in
            try await Self.withServer(key: key, client: client) { server in
                let (subscription, _) = try await service.subscribe(client, applicationServerKey: key)
                let keys = #"{"p256dh": "\#(WebPushSenderTests.base64URL(subscription.p256dh))", "auth": "\#(WebPushSenderTests.base64URL(subscription.auth))"}"#
                let token = ["Authorization": "Bearer " + TestToken.unsigned(uid: "ann")]
                func write(_ id: String, _ endpoint: String, _ keys: String) async throws -> Int {
                    let body = #"{"endpoint": "\#(endpoint)", "keys": \#(keys), "created": {".sv": "timestamp"}}"#
                    return try await server.request("PUT", "/pushSubscriptions/ann/\(id).json", body: body, headers: token).status
                }
                // The rules refuse what is plainly wrong (Firebase's 401 "Permission denied"): not
                // https, someone else's list, a bad key.
                #expect(try await write(subscription.id, "http://push.example.com/x", keys) == 401)
                #expect(try await write(subscription.id, subscription.endpoint.absoluteString, #"{"p256dh": "short", "auth": "x"}"#) == 401)
                let other = try await server.request(
                    "PUT", "/pushSubscriptions/bob/\(subscription.id).json",
                    body: #"{"endpoint": "\#(subscription.endpoint.absoluteString)", "keys": \#(keys), "created": {".sv": "timestamp"}}"#,
                    headers: token)
                #expect(other.status == 401)
                #expect(try await Self.get(server, "pushSubscriptions") == "null")
                // The server removes what only it can tell is wrong: a key that is not a point on
                // the curve, or a subscription stored under another ID.
                let offCurve = #"{"p256dh": "BA\#(String(repeating: "A", count: 85))", "auth": "\#(WebPushSenderTests.base64URL(subscription.auth))"}"#
                #expect(try await write("AAAAAAAAAAAAAAAAAAAAAA", subscription.endpoint.absoluteString, keys) == 200)
                #expect(try await write(subscription.id, subscription.endpoint.absoluteString, offCurve) == 200)
                let deadline = Date().addingTimeInterval(30)
                while try await Self.get(server, "pushSubscriptions/ann") != "null", Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
                #expect(try await Self.get(server, "pushSubscriptions/ann") == "null")
                // The one the browser gave is kept.
                #expect(try await write(subscription.id, subscription.endpoint.absoluteString, keys) == 200)
                #expect(try await Self.get(server, "pushSubscriptions/ann/\(subscription.id)/endpoint") == "\"\(subscription.endpoint.absoluteString)\"")
            }
        }
    }

    @Test func onePersonKeepsTheirTenNewestBrowsersAndOnlyThoseArePushedTo() async throws {
        let key = VAPIDKey()
        try await WebPushSenderTests.withPushService { service, client in
            try await Self.withServer(key: key, client: client) { server in
                var browsers: [(subscription: WebPushSubscription, serviceID: String)] = []
                for created in 1...12 {
                    let browser = try await service.subscribe(client, applicationServerKey: key)
                    browsers.append(browser)
                    try await Self.store(browser.0, for: "ann", on: server, created: created)
                }
                try await Self.put(server, "notifications/ann/follow_bob",
                    #"{"type": "follow", "from": "bob", "name": "Bob Martin", "timestamp": 1, "read": false}"#)
                // The ten stored last get the push; the two oldest are left out of it and removed.
                for browser in browsers.suffix(10) {
                    #expect(try await Self.messages(service, client, id: browser.serviceID, count: 1).count == 1)
                }
                for browser in browsers.prefix(2) { #expect(try await service.messages(client, id: browser.serviceID).isEmpty) }
                let kept = Set(browsers.suffix(10).map(\.subscription.id))
                let deadline = Date().addingTimeInterval(30)
                func stored() async throws -> Set<String> {
                    let json = try await Self.get(server, "pushSubscriptions/ann")
                    return Set((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]).keys)
                }
                while try await stored() != kept, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
                #expect(try await stored() == kept)
            }
        }
    }
}
